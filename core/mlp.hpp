// mlp.hpp — the network's shape, its flat parameter vector, initialisation and model.json.
//
// Parameters are one flat float vector, layer by layer: W (out × in, row-major, as
// PyTorch's Linear.weight) then b (out). One flat vector lets every backend run one Adam
// pass over all parameters and copy weights with one transfer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nnmath.hpp"

namespace nntrain {

enum class Init { glorot_uniform, he_uniform };

struct ModelSpec {
  std::vector<int> widths;  // widths[0] = inputs, widths.back() = outputs; >= 2 entries
  Activation hidden = Activation::relu;
  Activation output = Activation::identity;

  int layers() const { return static_cast<int>(widths.size()) - 1; }
  int in(int l) const { return widths[l]; }
  int out(int l) const { return widths[l + 1]; }
  Activation activation(int l) const { return l == layers() - 1 ? output : hidden; }
  size_t weight_offset(int l) const;  // offset of layer l's W in the flat vector
  size_t bias_offset(int l) const;    // offset of layer l's b
  size_t param_count() const;
  int max_width() const;
  // Multiply-adds of one forward pass for one sample (sum of in × out).
  size_t macs_per_sample() const;
};

struct Params {
  ModelSpec spec;
  std::vector<float> values;  // size spec.param_count()

  const float* W(int l) const { return values.data() + spec.weight_offset(l); }
  const float* b(int l) const { return values.data() + spec.bias_offset(l); }
  float* W(int l) { return values.data() + spec.weight_offset(l); }
  float* b(int l) { return values.data() + spec.bias_offset(l); }
};

// Weights drawn layer by layer, W row by row, from Rng(seed); biases zero.
// glorot_uniform: U(-sqrt(6/(in+out)), +); he_uniform: U(-sqrt(6/in), +).
Params init_params(const ModelSpec& spec, Init init, uint64_t seed);

const char* activation_name(Activation a);
std::vector<std::string> activation_names();  // every name parse_activation takes
// Returns false if `name` is not an activation.
bool parse_activation(const std::string& name, Activation& out);
const char* init_name(Init i);
bool parse_init(const std::string& name, Init& out);

// The data's column names a model was trained on: model.json records them ("inputs",
// "outputs"; keys PyTorch-side readers ignore) so that predict can find its inputs by name.
// Empty in a model written before they were recorded (or built by hand without them).
struct ModelNames {
  std::vector<std::string> inputs, outputs;
};

// model.json (docs/DESIGN.md §4). save writes atomically and refuses non-finite weights (IoError);
// load checks every shape against the file before allocating, and throws UsageError naming the file
// and the JSON path of what is wrong. Names, when given, must match the widths.
void save_model(const Params& p, const std::string& path, const ModelNames& names = {});
Params load_model(const std::string& path, ModelNames* names = nullptr);
std::string model_to_json_string(const Params& p, const ModelNames& names = {});
// False if any weight or bias is NaN or Inf (such a model is never written).
bool all_finite(const Params& p);

}  // namespace nntrain
