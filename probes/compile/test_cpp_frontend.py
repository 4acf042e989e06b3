"""Probes for docs/compile/cpp-frontend.md.

The extension probes are slow on a cold run: g++ compiles one translation unit with the
C++ frontend's headers (about 15 s on two cores). The build folder is
<repo>/_build/cpp-extensions/torch-<version>/compile_cpp_frontend, so a warm run only loads the library.
"""
import functools
from pathlib import Path

import pytest
import torch
import torch.utils.cpp_extension as cpp_extension

from verified.sources import cpp_build

EXTENSION = "compile_cpp_frontend"

# Only the headers the code uses: <torch/python.h> (the bindings and the GIL guard),
# <torch/nn/modules/linear.h> and <torch/utils.h> (manual_seed). With load_inline's implicit
# <torch/extension.h>, which pulls in all of <torch/all.h>, g++ takes twice as long.
SOURCE = r"""
#include <torch/python.h>
#include <torch/nn/modules/linear.h>
#include <torch/utils.h>

// A Linear layer built and run entirely by the C++ frontend.
std::vector<torch::Tensor> linear_forward(torch::Tensor x, int64_t seed) {
  torch::manual_seed(seed);
  torch::nn::Linear layer(torch::nn::LinearOptions(4, 3));
  torch::Tensor y = layer->forward(x);
  return {y, layer->weight.detach().clone(), layer->bias.detach().clone()};
}

// Autograd from C++: backward() fills .grad() of the layer's parameters.
std::vector<torch::Tensor> grads_of(torch::Tensor x, int64_t seed, bool release_gil) {
  torch::manual_seed(seed);
  torch::nn::Linear layer(4, 3);
  torch::Tensor loss = layer->forward(x).pow(2).sum();
  if (release_gil) {
    pybind11::gil_scoped_release no_gil;  // the engine refuses to start while this thread holds the GIL
    loss.backward();
  } else {
    loss.backward();
  }
  return {layer->weight.grad(), layer->bias.grad()};
}

std::vector<torch::Tensor> linear_grads(torch::Tensor x, int64_t seed) {
  return grads_of(x, seed, true);
}

std::vector<torch::Tensor> linear_grads_holding_gil(torch::Tensor x, int64_t seed) {
  return grads_of(x, seed, false);
}

std::vector<std::string> linear_parameter_names() {
  torch::nn::Linear layer(4, 3);
  std::vector<std::string> names;
  for (const auto& item : layer->named_parameters()) {
    names.push_back(item.key());
  }
  return names;
}

// The tensor passed in is the caller's tensor, not a copy.
void add_one_in_place(torch::Tensor t) {
  t.add_(1);
}
"""

FUNCTIONS = ["linear_forward", "linear_grads", "linear_grads_holding_gil", "linear_parameter_names", "add_one_in_place"]


def repo_root():
    here = Path(__file__).resolve().parents[2]
    if (here / "verified").is_dir():
        return here
    import verified  # a copy of this file elsewhere (the mutation check): the package marks the repo

    return Path(verified.__file__).resolve().parents[1]


@functools.cache
def extension():
    build = cpp_build.build_directory(repo_root(), EXTENSION)
    return cpp_extension.load_inline(name=EXTENSION, cpp_sources=[SOURCE], functions=FUNCTIONS,
                                     build_directory=str(build), extra_cflags=["-O0"], verbose=False,
                                     no_implicit_headers=True)


@pytest.mark.claim("compile.cpp.headers")
def test_cpp_api_headers_ship_in_the_wheel():
    include = Path(torch.__file__).resolve().parent / "include"
    api_include = include / "torch" / "csrc" / "api" / "include"
    assert (api_include / "torch" / "torch.h").is_file()
    assert (api_include / "torch" / "nn" / "modules" / "linear.h").is_file()
    assert not (include / "torch" / "torch.h").exists()  # not at torch/include/torch/torch.h
    assert [Path(p).resolve() for p in cpp_extension.include_paths()][:2] == [include, api_include]
    extension_h = (include / "torch" / "extension.h").read_text()
    assert "#include <torch/all.h>" in extension_h and "#include <torch/python.h>" in extension_h


@pytest.mark.claim("compile.cpp.linear-matches-python")
@pytest.mark.timeout(600)
def test_cpp_linear_matches_python_linear():
    ext = extension()
    x = torch.randn(2, 4)
    y, weight, bias = ext.linear_forward(x, 0)
    assert torch.allclose(y, x @ weight.t() + bias)
    torch.manual_seed(0)
    python_layer = torch.nn.Linear(4, 3)
    assert torch.equal(weight, python_layer.weight.detach())  # same seed, same initialisation
    assert torch.equal(bias, python_layer.bias.detach())
    assert ext.linear_parameter_names() == [name for name, _ in python_layer.named_parameters()]


@pytest.mark.claim("compile.cpp.autograd")
@pytest.mark.timeout(600)
def test_cpp_backward_matches_python():
    ext = extension()
    x = torch.randn(5, 4)
    weight_grad, bias_grad = ext.linear_grads(x, 3)
    torch.manual_seed(3)
    python_layer = torch.nn.Linear(4, 3)
    python_layer(x).pow(2).sum().backward()
    assert torch.allclose(weight_grad, python_layer.weight.grad)
    assert torch.allclose(bias_grad, python_layer.bias.grad)
    with pytest.raises(RuntimeError, match="The autograd engine was called while holding the GIL"):
        ext.linear_grads_holding_gil(x, 3)


@pytest.mark.claim("compile.cpp.same-tensor")
@pytest.mark.timeout(600)
def test_cpp_receives_the_same_tensor():
    ext = extension()
    t = torch.zeros(3)
    version = t._version
    ext.add_one_in_place(t)
    assert t.tolist() == [1.0, 1.0, 1.0]
    assert t._version == version + 1
