// sweep_util.hpp — the small sweep and its grid that test_sweep.cpp and test_sweep_resume.cpp
// both run, so the two files stay one experiment.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cli_util.hpp"

namespace testutil {

// Small and quick: 100 samples, 300 epochs, no warm-up, Adam. At lr 1 the 2->4->1 net ends
// near its first loss (2.6 from 7.4), while the 4-layer 64-wide one's loss explodes (~1e8 from
// 3.2: its output grows like the product of four layers' weights), past the divergence rule's
// 1000x the first: one point of six diverges, with orders of magnitude to spare either way.
// (At lr 1e5, once used here, the narrow net's finite ~1e21 is divergence too since that rule.)
inline const char* const kBase =
    "--config configs/peaks.json --quiet data.grid=10 train.epochs=300 timing.warmup_epochs=0";
inline const char* const kGrid = "--grid optimizer.lr=0.01,0.1,1 --grid 'model.layers=[2,4,1],[2,64,64,64,1]'";

inline nlohmann::json read_json(const std::string& f) { return nlohmann::json::parse(slurp(f)); }

}  // namespace testutil
