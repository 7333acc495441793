// tensile-host-select: load a master solution library (TensileLibrary.dat, msgpack) with Tensile's own C++
// host library and print the solution it selects for each problem read from stdin. No GPU is touched: the
// hardware is an AMDGPU object built from the command line, as rocBLAS builds one from hipGetDeviceProperties.
//
// usage: tensile-host-select LIBRARY.dat GFX [CU_COUNT [IS_APU [PERF_METRIC]]]
//
// Each stdin line is one problem, key=value tokens separated by spaces (see tools/tensile_host/compare.py):
//   op=Contraction_l_Ailk_Bljk_Cijk_Dijk types=Float,Float,Float,Float sizes=M,N,B,K
//   a=1,lda,strideA b=1,ldb,strideB c=1,ldc,strideC d=1,ldd,strideD alpha=1 beta=0
//   hpa=0 sb=1 ceqd=0 xdl=Float alt=0 altr=0 sr=0 ws=0
// sizes follow the operation identifier: the D indices in order, then the summation indices; strides are in
// the order of each tensor's indices; ws is the workspace in bytes (Tensile's default: 0). Each stdin line
// gets one stdout line: "<index> <name>" of the chosen solution, "none", or "error <message>".
// Ours (tensile-asm); Tensile's sources are used unmodified.

#include <Tensile/AMDGPU.hpp>
#include <Tensile/ContractionLibrary.hpp>
#include <Tensile/Contractions.hpp>
#include <Tensile/MasterSolutionLibrary.hpp>
#include <Tensile/Tensile.hpp>

#include "problem_line.hpp"

#include <cstdlib>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace tensile_host_line;

int main(int argc, char** argv)
{
    if(argc < 3 || argc > 6)
    {
        std::cerr << "usage: " << argv[0] << " LIBRARY.dat GFX [CU_COUNT [IS_APU [PERF_METRIC]]]\n"
                  << "reads one problem per stdin line, prints '<index> <name>', 'none' or 'error ...'\n";
        return 2;
    }
    std::string path   = argv[1];
    std::string gfx    = argv[2];
    int         cus    = argc > 3 ? std::atoi(argv[3]) : 0;
    int         apu    = argc > 4 ? std::atoi(argv[4]) : 0;
    auto        metric = Tensile::PerformanceMetric::DeviceEfficiency;
    if(argc > 5)
    {
        std::istringstream in(argv[5]);
        in >> metric;
    }

    auto library = Tensile::LoadLibraryFile<Tensile::ContractionProblem>(path);
    if(!library)
    {
        std::cerr << path << ": Tensile's host library could not load this file; rerun with "
                  << "TENSILE_DB=0x1000 for its reason\n";
        return 1;
    }
    auto master = std::dynamic_pointer_cast<Tensile::MasterContractionLibrary>(library);
    if(!master)
    {
        std::cerr << path << ": loaded, but not as a master solution library\n";
        return 1;
    }
    Tensile::AMDGPU hardware(gfx, cus, apu, gfx);
    if(static_cast<int>(hardware.processor) == 0)
    {
        std::cerr << gfx << ": not a processor Tensile's AMDGPU object knows\n";
        return 2;
    }
    std::cerr << "loaded " << path << ": " << master->solutions.size() << " solutions; hardware "
              << hardware.description() << "\n";

    std::string line;
    while(std::getline(std::cin, line))
    {
        if(line.empty())
            continue;
        try
        {
            auto problem  = parseProblem(line, metric);
            auto solution = master->findBestSolution(problem, hardware);
            if(solution)
                std::cout << solution->index << " " << solution->name() << "\n";
            else
                std::cout << "none\n";
        }
        catch(std::exception const& exc)
        {
            std::string what = exc.what();
            for(auto& ch : what)
                if(ch == '\n')
                    ch = ' ';
            std::cout << "error " << what << "\n";
        }
        std::cout.flush();
    }
    return 0;
}
