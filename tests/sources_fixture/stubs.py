from typing import TYPE_CHECKING, overload

if TYPE_CHECKING:
    def typed_only(x: int) -> int: ...


@overload
def compile(model: int) -> int: ...


@overload
def compile(model: None = None) -> None: ...


def compile(model=None):  # line 15
    return model


class Module:
    limit = None
    if True:
        limit = property(lambda self: 1)  # line 22

    @overload
    def state_dict(self, destination: dict) -> dict: ...

    def state_dict(self, *args, destination=None):  # line 27
        return {}

    if TYPE_CHECKING:
        def forward(self, x: int) -> int: ...
    else:
        def forward(self, x):  # line 33
            return x
