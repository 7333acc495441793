// The problem line both drivers read (tensile-host-select, tensile-host-solve): key=value tokens, see
// select_main.cpp's header. Ours (tensile-asm).
#pragma once

#include <Tensile/ContractionProblem.hpp>
#include <Tensile/Tensile.hpp>

#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace tensile_host_line
{
    inline std::vector<std::string> split(std::string const& text, char sep)
    {
        std::vector<std::string> out;
        std::string              item;
        std::istringstream       in(text);
        while(std::getline(in, item, sep))
            out.push_back(item);
        return out;
    }

    inline std::vector<size_t> numbers(std::string const& text)
    {
        std::vector<size_t> out;
        for(auto const& item : split(text, ','))
            out.push_back(std::stoull(item));
        return out;
    }

    inline bool flag(std::map<std::string, std::string> const& kv, std::string const& key)
    {
        auto it = kv.find(key);
        return it != kv.end() && it->second == "1";
    }

    inline Tensile::ContractionProblem parseProblem(std::string const& line, Tensile::PerformanceMetric metric)
    {
        std::map<std::string, std::string> kv;
        std::istringstream                 in(line);
        std::string                        token;
        while(in >> token)
        {
            auto eq = token.find('=');
            if(eq == std::string::npos)
                throw std::runtime_error("token without '=': " + token);
            kv[token.substr(0, eq)] = token.substr(eq + 1);
        }
        for(char const* key : {"op", "types", "sizes", "a", "b", "c", "d", "alpha", "beta"})
            if(kv.find(key) == kv.end())
                throw std::runtime_error(std::string("missing key ") + key);

        auto types = split(kv.at("types"), ',');
        if(types.size() != 4)
            throw std::runtime_error("types needs 4 data types (A,B,C,D)");
        auto dt = [](std::string const& name) { return Tensile::DataTypeInfo::Get(name).dataType; };

        double alpha = std::stod(kv.at("alpha"));
        double beta  = std::stod(kv.at("beta"));
        auto   problem
            = Tensile::ContractionProblem::FromIndexSizes(kv.at("op"),
                                                          numbers(kv.at("sizes")),
                                                          dt(types[0]),
                                                          numbers(kv.at("a")),
                                                          dt(types[1]),
                                                          numbers(kv.at("b")),
                                                          dt(types[2]),
                                                          numbers(kv.at("c")),
                                                          dt(types[3]),
                                                          numbers(kv.at("d")),
                                                          beta);
        // What rocBLAS's tensile_host.cpp sets on every problem it builds.
        problem.setAlphaRestriction(Tensile::toScalarValueEnum(alpha));
        problem.setBetaRestriction(Tensile::toScalarValueEnum(beta));
        problem.setHighPrecisionAccumulate(flag(kv, "hpa"));
        problem.setStridedBatched(kv.count("sb") == 0 || flag(kv, "sb"));
        problem.setCEqualsD(flag(kv, "ceqd"));
        problem.setFp16AltImpl(flag(kv, "alt"));
        problem.setFp16AltImplRound(flag(kv, "altr"));
        problem.setStochasticRounding(flag(kv, "sr"));
        if(kv.count("xdl"))
            problem.setF32XdlMathOp(dt(kv.at("xdl")));
        if(kv.count("ws") && kv.at("ws") != "None")
            problem.setWorkspaceSize(std::stoull(kv.at("ws")));
        if(kv.count("compute"))     // alpha's and beta's type, as rocBLAS sets them (tensile_host.cpp)
        {
            problem.setAlphaType(dt(kv.at("compute")));
            problem.setBetaType(dt(kv.at("compute")));
        }
        problem.setPerformanceMetric(metric);
        return problem;
    }
} // namespace tensile_host_line
