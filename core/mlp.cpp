// mlp.cpp — shapes, initialisation and activation names of the MLP; see mlp.hpp
// (model.json is model_io.cpp).
#include "mlp.hpp"

#include <algorithm>
#include <cmath>

#include "rng.hpp"

namespace nntrain {

size_t ModelSpec::weight_offset(int l) const {
  size_t off = 0;
  for (int i = 0; i < l; ++i) off += size_t(widths[i]) * widths[i + 1] + widths[i + 1];
  return off;
}
size_t ModelSpec::bias_offset(int l) const { return weight_offset(l) + size_t(in(l)) * out(l); }
size_t ModelSpec::param_count() const { return weight_offset(layers()); }
int ModelSpec::max_width() const { return *std::max_element(widths.begin(), widths.end()); }
size_t ModelSpec::macs_per_sample() const {
  size_t m = 0;
  for (int l = 0; l < layers(); ++l) m += size_t(in(l)) * out(l);
  return m;
}

Params init_params(const ModelSpec& spec, Init init, uint64_t seed) {
  Params p{spec, std::vector<float>(spec.param_count(), 0.0f)};
  Rng rng(seed);
  for (int l = 0; l < spec.layers(); ++l) {
    const double fan_in = spec.in(l), fan_out = spec.out(l);
    const double limit =
        init == Init::he_uniform ? std::sqrt(6.0 / fan_in) : std::sqrt(6.0 / (fan_in + fan_out));
    float* W = p.W(l);
    for (size_t i = 0; i < size_t(spec.in(l)) * spec.out(l); ++i) W[i] = rng.uniform_symmetric(limit);
  }
  return p;
}

namespace {
struct ActName {
  Activation a;
  const char* name;
};
constexpr ActName kActs[] = {{Activation::identity, "identity"},
                             {Activation::relu, "relu"},
                             {Activation::tanh, "tanh"},
                             {Activation::sigmoid, "sigmoid"},
                             {Activation::leaky_relu, "leaky_relu"}};
}  // namespace

const char* activation_name(Activation a) {
  for (const auto& e : kActs)
    if (e.a == a) return e.name;
  return "?";
}
std::vector<std::string> activation_names() {
  std::vector<std::string> out;
  for (const auto& e : kActs) out.push_back(e.name);
  return out;
}
bool parse_activation(const std::string& name, Activation& out) {
  for (const auto& e : kActs)
    if (name == e.name) {
      out = e.a;
      return true;
    }
  return false;
}
const char* init_name(Init i) { return i == Init::he_uniform ? "he_uniform" : "glorot_uniform"; }
bool parse_init(const std::string& name, Init& out) {
  if (name == "glorot_uniform") out = Init::glorot_uniform;
  else if (name == "he_uniform") out = Init::he_uniform;
  else return false;
  return true;
}

bool all_finite(const Params& p) {
  for (float v : p.values)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace nntrain
