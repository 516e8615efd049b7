import pytest

from pipeline.simserver.nodes import rendezvous


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ({"nnodes": 1, "dist_init_addr": None}, None),
        ({"nnodes": 2, "dist_init_addr": "127.0.0.1:20000"}, ("127.0.0.1", 20000)),
        ({"nnodes": 2, "dist_init_addr": "gpu03:29500"}, ("gpu03", 29500)),
    ],
)
def test_rendezvous(args, expected):
    assert rendezvous(args) == expected


@pytest.mark.parametrize("addr", [None, "", "gpu03", ":20000", "gpu03:port"])
def test_several_nodes_without_an_address_are_refused(addr):
    with pytest.raises(ValueError, match="--nnodes 2 needs --dist-init-addr HOST:PORT"):
        rendezvous({"nnodes": 2, "dist_init_addr": addr})
