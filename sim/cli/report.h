// `nicsim report`: the plots of a bench run (gnuplot SVG) and one
// self-contained HTML page of it.
#pragma once
#include <string>
#include <vector>

#include "cli/bench.h"

namespace nicsim::bench {

struct PlotFile {
  std::string title;
  std::string svg_path;
};

// Draws each plot of `suite` into plots_dir/<suite>_<plot>.svg; on failure
// `error` says why and the plots drawn so far are returned.
std::vector<PlotFile> draw_plots(const Suite& suite, const SuiteResult& now, const Baseline& base,
                                 const std::string& plots_dir, std::string& error);

}  // namespace nicsim::bench
