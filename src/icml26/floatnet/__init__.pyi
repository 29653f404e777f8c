from icml26.floatnet.constructions import (
    Table,
    build_binary_code_net,
    build_depth2_integer,
    build_depth3,
    build_narrow,
    table_values,
)
from icml26.floatnet.formats import FORMATS, FloatFormat
from icml26.floatnet.instances import random_table, random_width1_net
from icml26.floatnet.interpolant import ReLUInterpolant, relu_interpolant
from icml26.floatnet.network import ENGINES, ORDERS, FloatReLUNet, NetOutput
from icml26.floatnet.verification import (
    VerifyReport,
    collisions,
    is_monotone,
    special_values,
    stratified_sample,
    verify,
)

__all__ = [
    "ENGINES",
    "FORMATS",
    "ORDERS",
    "FloatFormat",
    "FloatReLUNet",
    "NetOutput",
    "ReLUInterpolant",
    "Table",
    "VerifyReport",
    "build_binary_code_net",
    "build_depth2_integer",
    "build_depth3",
    "build_narrow",
    "collisions",
    "is_monotone",
    "random_table",
    "random_width1_net",
    "relu_interpolant",
    "special_values",
    "stratified_sample",
    "table_values",
    "verify",
]
