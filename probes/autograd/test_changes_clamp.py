"""Probes for the before/after pair of docs/autograd/derivatives.md on clamp's gradient where
the input equals a bound (each side bounded to its releases with torch_version)."""
import pytest
import torch


def _grad(fn, value, device):
    x = torch.tensor([value], device=device, requires_grad=True)
    fn(x).sum().backward()
    return x.grad.item()


def at_the_bounds(device):
    """clamp's gradient where the input equals its bound: min, max, both, and a tensor bound."""
    zero = torch.zeros(1, device=device)
    return [_grad(lambda x: torch.clamp(x, min=0), 0.0, device),
            _grad(lambda x: torch.clamp(x, max=0), 0.0, device),
            _grad(lambda x: torch.clamp(x, min=0, max=1), 1.0, device),
            _grad(lambda x: torch.clamp(x, min=zero), 0.0, device)]


def check_away_from_the_bounds(device):
    for fn in (lambda x: torch.clamp(x, min=0, max=1), lambda x: x.clamp(min=0, max=1)):
        assert (_grad(fn, 0.5, device), _grad(fn, -1.0, device), _grad(fn, 2.0, device)) == (1.0, 0.0, 0.0)


@pytest.mark.claim("autograd.derivatives.clamp-bound-passes-gradient")
@pytest.mark.torch_version("<2.14")
def test_clamp_passes_the_gradient_at_its_bounds(device):
    assert at_the_bounds(device) == [1.0, 1.0, 1.0, 1.0]
    check_away_from_the_bounds(device)


@pytest.mark.claim("autograd.derivatives.clamp-bound-blocks-gradient")
@pytest.mark.torch_version(">=2.14")
def test_clamp_blocks_the_gradient_at_its_bounds(device):
    assert at_the_bounds(device) == [0.0, 0.0, 0.0, 0.5]
    assert _grad(torch.relu, 0.0, device) == 0.0
    assert _grad(lambda x: torch.maximum(x, torch.zeros(1, device=device)), 0.0, device) == 0.5
    check_away_from_the_bounds(device)
