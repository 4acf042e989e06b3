"""Probes for docs/autograd/graph.md."""
import warnings

import pytest
import torch


def node_names(root):
    """Names of every node reachable from `root` through next_functions, depth first.

    Every visited node is kept alive in `kept`: the Python object of a node can be freed once
    dropped, and a new one could then reuse its id() and be taken for a node already seen."""
    seen, kept, out, stack = set(), [], [], [root]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        kept.append(node)
        out.append(node.name())
        stack.extend(fn for fn, _ in node.next_functions)
    return out


@pytest.mark.claim("autograd.graph.user-tensor-is-leaf")
def test_user_tensor_is_a_leaf(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    assert x.grad_fn is None and x.is_leaf


@pytest.mark.claim("autograd.graph.grad-fn-on-results")
def test_results_get_grad_fn(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x * 2
    z = y.sum()
    assert not y.is_leaf and not z.is_leaf
    assert y.grad_fn.name() == "MulBackward0"
    assert z.grad_fn.name() == "SumBackward0"
    assert type(z.grad_fn).__name__ == "SumBackward0"


@pytest.mark.claim("autograd.graph.next-functions")
def test_next_functions_walk_to_accumulate_grad(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    w = torch.tensor(2.0, device=device)  # a constant: does not require grad
    s = (x * w).sum()
    (mul, mul_slot), = s.grad_fn.next_functions
    assert mul.name() == "MulBackward0" and mul_slot == 0
    (acc, acc_slot), (const, const_slot) = mul.next_functions
    assert type(acc).__name__ == "AccumulateGrad" and acc_slot == 0
    assert const is None and const_slot == 0


@pytest.mark.claim("autograd.graph.accumulator-node")
def test_accumulate_grad_node_holds_the_leaf(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    acc = (x * 2).grad_fn.next_functions[0][0]
    assert acc.name() == "torch::autograd::AccumulateGrad"
    assert acc.variable is x
    assert acc.next_functions == ()


@pytest.mark.claim("autograd.graph.one-accumulator-per-leaf")
def test_uses_of_a_leaf_share_its_accumulator(device):
    x = torch.ones(3, device=device, requires_grad=True)
    a = x * 2
    b = x.exp()
    acc_a = a.grad_fn.next_functions[0][0]
    acc_b = b.grad_fn.next_functions[0][0]
    assert acc_a is acc_b
    assert type(acc_a).__name__ == "AccumulateGrad"


@pytest.mark.claim("autograd.graph.requires-grad-propagates")
def test_requires_grad_propagation(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    c = torch.tensor([4.0, 5.0, 6.0], device=device)
    assert (x * c).requires_grad  # one input that requires grad is enough
    nothing = c * c
    assert not nothing.requires_grad and nothing.grad_fn is None


@pytest.mark.claim("autograd.graph.integer-results-no-grad")
def test_integer_and_bool_results_do_not_require_grad(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    assert x.argmax().dtype == torch.int64 and not x.argmax().requires_grad
    above = torch.gt(x, 1)
    assert above.dtype == torch.bool and not above.requires_grad
    assert x.argmax().grad_fn is None and above.grad_fn is None


@pytest.mark.claim("autograd.graph.integer-requires-grad-raises")
def test_integer_tensor_cannot_require_grad(device):
    with pytest.raises(RuntimeError, match="Only Tensors of floating point and complex dtype can require gradients"):
        torch.tensor([1, 2], device=device, requires_grad=True)
    assert torch.tensor([1, 2], device=device, dtype=torch.float32, requires_grad=True).requires_grad


@pytest.mark.claim("autograd.graph.grad-only-on-leaves")
def test_grad_only_on_leaves(device):
    x = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 3
    z = y * y
    z.sum().backward()
    assert x.grad.tolist() == [18.0, 36.0]  # d(9x^2)/dx = 18x
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert y.grad is None
    assert any(issubclass(w.category, UserWarning) and "not a leaf Tensor" in str(w.message) for w in caught)


@pytest.mark.claim("autograd.graph.retain-grad")
def test_retain_grad_keeps_a_non_leaf_gradient(device):
    x2 = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    y2 = x2 * 3
    y2.retain_grad()
    assert y2.retains_grad
    (y2 * y2).sum().backward()
    assert y2.grad.tolist() == [6.0, 12.0]  # 2*y
    assert not y2.is_leaf


@pytest.mark.claim("autograd.graph.rebuilt-every-run")
def test_graph_follows_python_control_flow(device):
    x = torch.tensor(1.5, device=device, requires_grad=True)

    def forward(n):
        y = x
        for _ in range(n):  # a Python loop: its length decides the graph
            y = y * x
        if y.item() > 3:  # a data-dependent branch
            y = y.sin()
        else:
            y = y.cos()
        return y

    small, big = forward(1), forward(3)
    assert small.grad_fn.name() == "CosBackward0"  # 1.5**2 = 2.25
    assert big.grad_fn.name() == "SinBackward0"  # 1.5**4 = 5.06
    assert node_names(small.grad_fn).count("MulBackward0") == 1
    assert node_names(big.grad_fn).count("MulBackward0") == 3
    again = forward(1)
    assert again.grad_fn is not small.grad_fn  # a new node object every run
    # one step per node recorded since, itself included: 3 Mul + Sin of forward(3), then Mul + Cos
    assert again.grad_fn._sequence_nr() == small.grad_fn._sequence_nr() + 6


@pytest.mark.claim("autograd.graph.nodes-are-not-functions")
def test_grad_fn_is_a_cpp_node_not_a_function(device):
    x = torch.ones(2, device=device, requires_grad=True)
    built_in = (x * 2).grad_fn
    cls = type(built_in)
    assert cls is torch._C._functions.MulBackward0  # a class exported from C++
    assert cls.__mro__ == (cls, object)  # no Python base class: not a subclass of Node or Function
    assert torch.autograd.graph.Node.__subclasshook__(cls) is True
    assert isinstance(built_in, torch.autograd.graph.Node)
    assert not isinstance(built_in, torch.autograd.Function)


@pytest.mark.claim("autograd.graph.node-is-abstract")
def test_node_is_an_abstract_class():
    import inspect

    Node = torch.autograd.graph.Node
    assert inspect.isabstract(Node)
    public = {name for name in Node.__abstractmethods__ if not name.startswith("_")}
    assert public == {"name", "next_functions", "metadata", "register_hook", "register_prehook"}
    assert {"_input_metadata", "_register_hook_dict"} <= Node.__abstractmethods__  # private ones too (a
    # third, _sequence_nr, since 2.11): which private methods are abstract is no user API
    with pytest.raises(TypeError, match="Can't instantiate abstract class Node"):
        Node()


@pytest.mark.claim("autograd.graph.custom-node-not-function")
def test_custom_backward_class_is_a_node_not_a_function(device):
    class Twice(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    assert type(Twice) is torch.autograd.function.FunctionMeta  # the metaclass that makes it
    made_at_definition = Twice.__dict__.get("_backward_cls")  # before any apply
    assert made_at_definition is not None and made_at_definition.__name__ == "TwiceBackward"
    x = torch.ones(2, device=device, requires_grad=True)
    custom = Twice.apply(x).grad_fn
    assert type(custom) is made_at_definition
    assert issubclass(type(custom), torch.autograd.function.BackwardCFunction)
    assert not issubclass(type(custom), torch.autograd.Function)
    assert not isinstance(custom, torch.autograd.Function)
    assert isinstance(custom, torch.autograd.graph.Node)


@pytest.mark.claim("autograd.graph.views-record-nodes")
def test_view_ops_record_nodes(device):
    x = torch.ones(2, 3, device=device, requires_grad=True)
    assert x.t().grad_fn.name() == "TBackward0"
    assert x[0].grad_fn.name() == "SelectBackward0"
    assert x.view(6).grad_fn.name() == "ViewBackward0"


@pytest.mark.claim("autograd.graph.detach-records-nothing")
def test_detach_records_nothing(device):
    x = torch.ones(2, 3, device=device, requires_grad=True)
    d = x.detach()
    assert d.grad_fn is None and d._base is None and not d.requires_grad
    assert d.data_ptr() == x.data_ptr()
    assert not d.mul(2).requires_grad  # the chain is cut


@pytest.mark.claim("autograd.graph.sequence-per-thread")
def test_sequence_numbers_count_per_thread():
    import threading

    x = torch.ones(2, requires_grad=True)
    first = (x * 2).grad_fn._sequence_nr()
    second = (x * 2).grad_fn._sequence_nr()
    assert second == first + 1
    seen = {}

    def in_thread():
        seen["a"] = (x * 2).grad_fn._sequence_nr()
        seen["b"] = (x * 2).grad_fn._sequence_nr()

    worker = threading.Thread(target=in_thread)
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert seen == {"a": 0, "b": 1}  # a fresh thread starts its own count
    assert (x * 2).grad_fn._sequence_nr() == second + 1  # the main thread's count goes on
