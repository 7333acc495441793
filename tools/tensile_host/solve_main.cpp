// tensile-host-solve: load a master solution library (TensileLibrary.dat, msgpack) with Tensile's own C++ host
// library, select a solution for each problem read from stdin (findBestSolution, as tensile-host-select) and
// call that solution's solve(problem, inputs, hardware) with fake device pointers, printing every kernel
// launch Tensile's host would make: the kernel's name, work-group size, number of work-groups and the bytes of
// its kernel arguments. No GPU is touched; rocBLAS launches exactly these (tensile_host.cpp -> hip adapter).
//
// usage: tensile-host-solve LIBRARY.dat GFX CU_COUNT [IS_APU [PERF_METRIC]]
//
// stdin: one problem per line, as tensile-host-select's (problem_line.hpp), plus compute=<alpha/beta type>
// (rocBLAS sets it on every problem; without it Tensile's solve() takes D's type, or Float for BFloat16 A).
// The fake addresses (FAKE_* below; tools/tensile_host/launch_compare.py passes ours the same): A, B, C, D and
// the workspace; the per-batch pointer arrays of a pointer-array (StridedBatched false) problem. With ceqd=1
// C's address is D's. Each problem prints
//   solution <index> <name>            (or "none", or "error <message>")
//   kernel <name> <wgx>,<wgy>,<wgz> <nwgx>,<nwgy>,<nwgz> <argument bytes as hex>     (one per launch)
//   end
// Ours (tensile-asm); Tensile's sources are used unmodified.

#include <Tensile/AMDGPU.hpp>
#include <Tensile/ContractionLibrary.hpp>
#include <Tensile/Contractions.hpp>
#include <Tensile/MasterSolutionLibrary.hpp>
#include <Tensile/Tensile.hpp>

#include "problem_line.hpp"

#include <cstdint>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

using namespace tensile_host_line;

namespace
{
    constexpr uintptr_t FAKE_A = 0x100000000, FAKE_B = 0x200000000, FAKE_C = 0x300000000, FAKE_D = 0x400000000,
                        FAKE_WS = 0x500000000, FAKE_BATCH_A = 0x110000000, FAKE_BATCH_B = 0x210000000,
                        FAKE_BATCH_C = 0x310000000, FAKE_BATCH_D = 0x410000000;

    template <typename T>
    T scalar(double v)
    {
        return static_cast<T>(static_cast<float>(v));
    }
    template <>
    double scalar<double>(double v)
    {
        return v;
    }
    template <>
    int32_t scalar<int32_t>(double v)
    {
        return static_cast<int32_t>(v);
    }
    template <>
    std::complex<double> scalar<std::complex<double>>(double v)
    {
        return std::complex<double>(v, 0.0);
    }
    template <>
    std::complex<float> scalar<std::complex<float>>(double v)
    {
        return std::complex<float>(static_cast<float>(v), 0.0f);
    }

    template <typename Inputs>
    std::vector<Tensile::KernelInvocation> solveWith(Tensile::ContractionSolution const& solution,
                                                     Tensile::ContractionProblem const&  problem,
                                                     Tensile::Hardware const&            hardware,
                                                     double                              alpha,
                                                     double                              beta)
    {
        using A = typename Inputs::AType;
        using B = typename Inputs::BType;
        using C = typename Inputs::CType;
        using D = typename Inputs::DType;
        uintptr_t c = problem.cEqualsD() ? FAKE_D : FAKE_C;
        Inputs inputs(reinterpret_cast<A const*>(FAKE_A),
                      reinterpret_cast<B const*>(FAKE_B),
                      reinterpret_cast<C const*>(c),
                      reinterpret_cast<D*>(FAKE_D),
                      reinterpret_cast<A const* const*>(FAKE_BATCH_A),
                      reinterpret_cast<B const* const*>(FAKE_BATCH_B),
                      reinterpret_cast<C const* const*>(problem.cEqualsD() ? FAKE_BATCH_D : FAKE_BATCH_C),
                      reinterpret_cast<D* const*>(FAKE_BATCH_D),
                      scalar<typename Inputs::AlphaType>(alpha),
                      scalar<typename Inputs::BetaType>(beta),
                      reinterpret_cast<void*>(FAKE_WS));
        return solution.solve(problem, inputs, hardware);
    }

    std::vector<Tensile::KernelInvocation> solve(Tensile::ContractionSolution const& solution,
                                                 Tensile::ContractionProblem const&  problem,
                                                 Tensile::Hardware const&            hardware,
                                                 double                              alpha,
                                                 double                              beta)
    {
        using namespace Tensile;
        auto const& pt    = solution.problemType;
        auto        alphaT = problem.alphaType();
        if(alphaT == DataType::None) // as ContractionSolution::solve
            alphaT = pt.aType == DataType::BFloat16 ? DataType::Float : pt.dType;
        auto id = ContractionInputs::TypeId(pt.aType, pt.bType, pt.cType, pt.dType, alphaT, alphaT);
#define TENSILE_HOST_CASE(T)                                 \
    if(id == T::TypeId())                                    \
        return solveWith<T>(solution, problem, hardware, alpha, beta);
        TENSILE_HOST_CASE(ContractionInputs_S_S_S)
        TENSILE_HOST_CASE(ContractionInputs_D_D_D)
        TENSILE_HOST_CASE(ContractionInputs_C_C_C)
        TENSILE_HOST_CASE(ContractionInputs_Z_Z_Z)
        TENSILE_HOST_CASE(ContractionInputs_H_H_H)
        TENSILE_HOST_CASE(ContractionInputs_H_H_S)
        TENSILE_HOST_CASE(ContractionInputs_H_S_S)
        TENSILE_HOST_CASE(ContractionInputs_B_B_S)
        TENSILE_HOST_CASE(ContractionInputs_B_S_S)
        TENSILE_HOST_CASE(ContractionInputs_I8x4_I32_I32)
        TENSILE_HOST_CASE(ContractionInputs_I8_I32_I32)
        TENSILE_HOST_CASE(ContractionInputs_I32_I32_I32)
#undef TENSILE_HOST_CASE
        throw std::runtime_error("tensile-host-solve: no typed inputs for this problem's types");
    }

    double value(std::string const& line, std::string const& key)
    {
        auto pos = line.find(" " + key + "=");
        if(pos == std::string::npos)
            throw std::runtime_error("missing key " + key);
        return std::stod(line.substr(pos + key.size() + 2));
    }

    std::string hex(Tensile::KernelArguments const& args)
    {
        std::ostringstream out;
        auto               data = static_cast<uint8_t const*>(args.data());
        for(size_t i = 0; i < args.size(); i++)
            out << std::hex << std::setw(2) << std::setfill('0') << static_cast<int>(data[i]);
        return out.str();
    }
} // namespace

int main(int argc, char** argv)
{
    if(argc < 4 || argc > 6)
    {
        std::cerr << "usage: " << argv[0] << " LIBRARY.dat GFX CU_COUNT [IS_APU [PERF_METRIC]]\n"
                  << "reads one problem per stdin line; prints the selected solution and its kernel launches\n";
        return 2;
    }
    std::string path   = argv[1];
    std::string gfx    = argv[2];
    int         cus    = std::atoi(argv[3]);
    int         apu    = argc > 4 ? std::atoi(argv[4]) : 0;
    auto        metric = Tensile::PerformanceMetric::DeviceEfficiency;
    if(argc > 5)
    {
        std::istringstream in(argv[5]);
        in >> metric;
    }
    auto library = Tensile::LoadLibraryFile<Tensile::ContractionProblem>(path);
    auto master  = std::dynamic_pointer_cast<Tensile::MasterContractionLibrary>(library);
    if(!master)
    {
        std::cerr << path << ": Tensile's host library could not load this file as a master solution "
                  << "library; rerun with TENSILE_DB=0x1000 for its reason\n";
        return 1;
    }
    Tensile::AMDGPU hardware(gfx, cus, apu, gfx);
    if(static_cast<int>(hardware.processor) == 0 || cus < 1)
    {
        std::cerr << gfx << " with " << cus << " CUs: not a processor Tensile's AMDGPU object knows, or no CUs\n";
        return 2;
    }
    std::string line;
    while(std::getline(std::cin, line))
    {
        if(line.empty())
            continue;
        try
        {
            auto problem  = parseProblem(line, metric);
            auto solution = master->findBestSolution(problem, hardware);
            if(!solution)
                std::cout << "none\n";
            else
            {
                std::cout << "solution " << solution->index << " " << solution->name() << "\n";
                for(auto const& k : solve(*solution, problem, hardware, value(" " + line, "alpha"),
                                          value(" " + line, "beta")))
                    std::cout << "kernel " << k.kernelName << " " << k.workGroupSize.x << ","
                              << k.workGroupSize.y << "," << k.workGroupSize.z << " " << k.numWorkGroups.x
                              << "," << k.numWorkGroups.y << "," << k.numWorkGroups.z << " " << hex(k.args)
                              << "\n";
            }
        }
        catch(std::exception const& exc)
        {
            std::string what = exc.what();
            for(auto& ch : what)
                if(ch == '\n')
                    ch = ' ';
            std::cout << "error " << what << "\n";
        }
        std::cout << "end\n";
        std::cout.flush();
    }
    return 0;
}
