"""Control-flow functions of the dynamic-to-static and control-flow test suites of Paddle
(test/dygraph_to_static), MindSpore (tests/st/control, tests/ut/python/graph_syntax), PyTorch
(torch.cond / while_loop tests) and JAX (lax.while_loop / fori_loop / cond / switch tests),
written in their Python form with the framework's tensor calls as numpy calls. Each comment
names where its shape comes from.

test_jit.py runs each twice, plainly in Python on numpy and through @cfx.jit (cpu backend), and
the two must agree; a function the translation refuses is counted with its reason. Run as a
script to print the count:

    CFX_LIBRARY=build/libcfx.so PYTHONPATH=python python3 python/tests/jit_corpus.py
"""
import math

import numpy as np

CASES = []
SEED = 2020
BATCH = 4
LIMIT = 10


def case(*args, src=""):
    """Registers fn with a function making its arguments (fresh arrays for each run)."""
    def wrap(fn):
        CASES.append((fn, args, src))
        return fn
    return wrap


def f32(*shape, lo=-1.0, hi=1.0, seed=0):
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(np.float32)


def i32(*values):
    return np.array(values, dtype=np.int32)


X4 = f32(4, seed=1)
X44 = f32(4, 4, seed=2)
XPOS = f32(5, lo=0.5, hi=2.0, seed=3)
ONE64 = np.zeros(1).astype("int64")
ONE32 = np.zeros(1).astype("int32")

# ---- Paddle test_break_continue.py ----------------------------------------------------------


@case(ONE64, src="Paddle dygraph_to_static/test_break_continue.py: test_continue_in_for")
def continue_in_for(x):
    for i in range(10):
        x += 1
        if i > 5:
            continue
        x += i
    return x


@case(ONE64, src="Paddle test_break_continue.py: test_continue_in_for_at_end")
def continue_in_for_at_end(x):
    for i in range(10):
        x += 1
        if i > 5:
            continue
    return x


@case(ONE64, src="Paddle test_break_continue.py: test_continue_in_while")
def continue_in_while(x):
    i = np.zeros(1, dtype=np.int32)
    while i < 10:
        i += 1
        if i > 5:
            continue
        x += i
    return x


@case(ONE64, src="Paddle test_break_continue.py: test_break_in_for")
def break_in_for(x):
    for i in range(10):
        x += 1
        if i > 5:
            break
        x += i
    return x


@case(ONE64, src="Paddle test_break_continue.py: test_break_in_for_at_end")
def break_in_for_at_end(x):
    for i in range(10):
        x += 1
        if i > 5:
            break
    return x


@case(ONE64, src="Paddle test_break_continue.py: test_break_in_while")
def break_in_while(x):
    i = np.zeros(1, dtype=np.int32)
    while i < 10:
        i += 1
        if i > 5:
            break
        x += i
    return x


@case(ONE64, src="Paddle test_break_continue.py: test_break_continue_in_for")
def break_continue_in_for(x):
    for i in range(1, 10, 1):
        if i <= 4:
            x += 1
            continue
        else:
            x += 10010
            break
    a = np.zeros(1, dtype=np.int32)
    b = 3
    for i in range(b):
        if a <= 4:
            x += 1
            a += 1
            continue
        else:
            x += 10010
            break
    return x


@case(ONE64, src="Paddle test_break_continue.py: test_for_in_else")
def for_in_else(x):
    if False:
        pass
    else:
        for i in range(0, 10):
            if i > 5:
                x += 1
                break
            x += i
    if False:
        pass
    else:
        for i in range(0, 10):
            x += 1
            break
    return x


@case(ONE32, src="Paddle test_break_continue.py: test_optim_break_in_while")
def optim_break_in_while(x):
    i = np.zeros(1, dtype=np.int32)
    while i < 10:
        if i > 5:
            break
        x += i
        i += 1
    return x


@case(f32(10, 16, lo=0, hi=0.01, seed=4), src="Paddle test_break_continue.py: test_optim_break_in_for")
def optim_break_in_for(x):
    for i in range(10):
        if x.sum() > 5:
            break
        x += i
        if i < 3:
            x = x * 2
    return x

# ---- Paddle test_loop.py ----------------------------------------------------------------------


@case(np.array([5], dtype=np.int64), src="Paddle dygraph_to_static/test_loop.py: while_loop_dyfunc")
def while_loop_dyfunc(x):
    i = x.copy()
    while x < 10:
        i = i + x
        x = x + 1
    return i


@case(np.array([5], dtype=np.int64), src="Paddle test_loop.py: while_loop_dyfunc_without_tensor")
def while_loop_dyfunc_without_tensor(x):
    a = 1
    while not a > 4 and a > 0:
        x = x + 1
        a = a + 1
    return x


@case(np.array([5], dtype=np.int64), src="Paddle test_loop.py: while_loop_dyfun_with_conflict_var")
def while_loop_with_conflict_var(x):
    i = x.copy()
    relu = 3
    while x < 10:
        i = i + x + relu
        x = x + 1
    return i


@case(np.array([5], dtype=np.int64), src="Paddle test_loop.py: while_loop_dyfunc_with_none")
def while_loop_with_none(x):
    i = x.copy() if x is not None else x + 1
    flag = 1
    while x < 10:
        i = i + x if flag is not None else x + i
        x = x + 1
    return i


@case(np.array([5], dtype=np.int64), src="Paddle test_loop.py: while_loop_bool_op")
def while_loop_bool_op(x):
    i = x.copy()
    while x <= -1 or x < -3 or (x < -7 or x < -5) or (x >= 0 and x < 10):
        i = i + x
        x = x + 1
    return i


@case(np.array([5], dtype=np.int64), src="Paddle test_loop.py: while_loop_bool_op2")
def while_loop_bool_op2(x):
    i = x.copy()
    a = 1
    while x < 10 and (a < 4 or a > 0) or a < -1 or not x > -1:
        i = i + x
        x = x + 1
        a = a + 1
    return i


@case(np.array([-1.0, 2.0], dtype=np.float32), src="Paddle test_loop.py: while_loop_class_var (fields as variables)")
def while_loop_fields(x):
    a = 3
    b = 4
    c = 5
    i = x.copy()
    while i[0] < 10:
        c = c + b
        i += 1
    return c, i


@case(5, src="Paddle test_loop.py: for_loop_dyfunc")
def for_loop_dyfunc(max_len):
    ret = np.zeros(1, dtype=np.float32)
    for i in range(max_len):
        ret = ret + 3.0
    return ret


@case(5, src="Paddle test_loop.py: for_loop_dyfunc2")
def for_loop_dyfunc2(max_len):
    a = 1
    ret = np.zeros(1, dtype=np.float32)
    for i in range(max_len):
        ret = ret + 3.0
        a = a + 2
    return ret, a


@case(5, src="Paddle test_loop.py: for_loop_dyfunc3")
def for_loop_dyfunc3(max_len):
    ret = np.zeros(1, dtype=np.float32)
    for i in range(1, 10, 2):
        ret = ret + 3.0 * i
    return ret


@case(5, src="Paddle test_loop.py: for_loop_dyfunc4")
def for_loop_dyfunc4(max_len):
    ret = np.zeros(1, dtype=np.float32)
    for i in range(10, 1, -2):
        ret = ret + i
    return ret


@case(np.arange(3).astype(np.int64), src="Paddle test_loop.py: for_loop_class_var (fields as variables)")
def for_loop_fields(max_len):
    a = 3
    b = 4
    c = np.zeros(1, dtype=np.int64) + 5
    for i in range(len(max_len)):
        b = c + a
    return b


@case(np.array([2], dtype=np.int32), src="Paddle test_loop.py: nested_for_loop_dyfunc")
def nested_for_loop_dyfunc(x):
    two = 2
    three = 3
    for j in range(two):
        for i in range(10):
            a = 2 + j
    for i in range(three):
        b = np.zeros(1, dtype=np.float32)
    return b


@case(np.array([1], dtype=np.int64), src="Paddle test_loop.py: while_loop_dyfunc_without_tensor; a loop variable read after the loop")
def loop_var_after_loop(x):
    for i in range(3):
        x = x + i
    return x + i


@case(i32(1, 2, 3, 4), src="Paddle test_loop.py: test_for_loop_with_break_in_while (shape)")
def while_in_for_with_break(x):
    total = 0
    for i in range(len(x)):
        j = 0
        while j < 10:
            if j == x[i]:
                break
            total += j
            j += 1
    return total

# ---- Paddle test_ifelse.py / ifelse_simple_func.py ---------------------------------------------


@case(f32(3, 4, seed=5), src="Paddle ifelse_simple_func.py: add_fn")
def add_fn(x):
    x = x + 1
    return x


@case(f32(3, 4, lo=4, hi=7, seed=6), src="Paddle ifelse_simple_func.py: dyfunc_with_if_else (label None)")
def dyfunc_with_if_else(x_v, label=None):
    if np.mean(x_v) > 5:
        x_v = x_v - 1
    else:
        x_v = x_v + 1
    if label is not None:
        return x_v * label
    return x_v


@case(f32(3, 4, seed=7), src="Paddle ifelse_simple_func.py: dyfunc_with_if_else2")
def dyfunc_with_if_else2(x, col=100):
    row = 0
    if abs(col) > x.shape[-1]:
        col = -1
    else:
        col = 1
    if np.mean(x) > x[row][col]:
        x_pow = np.power(x, 2)
        y = np.maximum(x_pow, 0)
    else:
        x_pow = np.power(x, 2)
        y = np.tanh(x_pow)
    return y


@case(f32(3, 4, seed=8), src="Paddle ifelse_simple_func.py: dyfunc_with_if_else3")
def dyfunc_with_if_else3(x):
    y = x + 1
    if np.mean(x) < 5:
        x = x + 1
        z = x + 2
        q = x + 3
        m = x + 2
        n = x + 3
    else:
        y = y + 1
        z = x - 2
        q = x + 3
        m = x + 2
        n = x + 3
    q = q + 1
    n = q + 2
    x = n
    return x


@case(src="Paddle ifelse_simple_func.py: dyfunc_with_if_else_early_return1")
def early_return1():
    x = np.array([10])
    if x == 0:
        a = np.zeros([2, 2])
        b = np.zeros([3, 3])
        return a, b
    a = np.zeros([2, 2]) + 1
    return a, np.zeros([3, 3]) + 1


@case(src="Paddle ifelse_simple_func.py: dyfunc_with_if_else_early_return2")
def early_return2():
    x = np.array([10])
    if x == 0:
        a = np.zeros([2, 2])
        b = np.zeros([3, 3])
        return a, b
    elif x == 1:
        c = np.zeros([2, 2]) + 1
        d = np.zeros([3, 3]) + 1
        return c, d
    e = np.zeros([2, 2]) + 3
    return e, np.zeros([3, 3]) + 3


@case(f32(2, seed=9), src="Paddle ifelse_simple_func.py: dyfunc_with_if_else_with_list_generator")
def if_else_with_list_generator(x):
    if 10 > 5:
        y = sum([np.full([2], v, dtype=np.float32) for v in range(5)])
    else:
        y = x
    return y


@case(f32(4, 3, seed=10), src="Paddle ifelse_simple_func.py: nested_if_else")
def nested_if_else(x_v):
    batch_size = 16
    feat_size = x_v.shape[-1]
    bias = np.ones([feat_size], dtype=np.float32)
    if x_v.shape[0] != batch_size:
        batch_size = x_v.shape[0]
    if np.mean(x_v) < 0:
        y = x_v + bias
        w = np.full([feat_size], 10, dtype=np.float32)
        if y[0][0] < 10:
            tmp = y * w
            y = np.maximum(tmp, 0)
            if np.mean(y) < batch_size:
                y = np.abs(y)
            else:
                tmp = np.full(y.shape, -1, dtype=np.float32)
                y = y - tmp
        else:
            tmp = y * w
            y = np.maximum(tmp, 0)
    else:
        y = x_v - bias
        w = np.full([feat_size], 10, dtype=np.float32)
        tmp = y * w
        y = np.maximum(tmp, 0)
        y = np.abs(y)
    return y


@case(f32(4, seed=11), src="Paddle ifelse_simple_func.py: nested_if_else_2")
def nested_if_else_2(x):
    y = np.reshape(x, [-1, 1])
    b = 2
    if b < 1:
        z = y
    x_shape_0 = x.shape[0]
    if x_shape_0 < 1:
        if y.shape[0] < 1:
            res = np.full(x.shape, 2, dtype=np.float32)
            z = y + 1
        else:
            res = np.full(x.shape, 3, dtype=np.float32)
    else:
        res = x
    return res


@case(f32(4, seed=12), src="Paddle ifelse_simple_func.py: nested_if_else_3")
def nested_if_else_3(x):
    y = np.reshape(x, [-1, 1])
    b = 2
    if b < 1:
        z = y
    else:
        z = x
    if b < 1:
        res = x
        if b > 1:
            out = x + 1
        else:
            out = x - 1
    else:
        if y.shape[0] < 1:
            res = np.full(x.shape, 2, dtype=np.float32)
            out = x - 1
        else:
            res = np.full(x.shape, 3, dtype=np.float32)
            out = x + 1
    return res


@case(f32(4, 2, seed=13), src="Paddle ifelse_simple_func.py: if_with_and_or")
def if_with_and_or(x_v, label=None):
    batch_size = x_v.shape
    if x_v is not None and (np.mean(x_v) > 0 or label is not None) and batch_size[0] > 1 and True:
        x_v = x_v - 1
    else:
        x_v = x_v + 1
    return x_v


@case(f32(4, 2, seed=14), src="Paddle ifelse_simple_func.py: if_with_and_or_1")
def if_with_and_or_1(x, y=None):
    batch_size = x.shape
    if batch_size[0] > 1 and y is not None:
        x = x + 1
    if y is not None or batch_size[0] > 1:
        x = x - 1
    return x


@case(f32(4, 2, seed=15), f32(4, 2, seed=16), src="Paddle ifelse_simple_func.py: if_with_and_or_2")
def if_with_and_or_2(x, y=None):
    batch_size = x.shape
    if x is not None and batch_size[0] > 1 and y is not None:
        x = x + 1
    if batch_size[0] > 1 or y is not None or x is not None:
        x = x - 1
    return x


@case(f32(4, 2, lo=0, seed=17), f32(4, 2, seed=18), src="Paddle ifelse_simple_func.py: if_with_and_or_3")
def if_with_and_or_3(x, y=None):
    batch_size = x.shape
    mean_res = np.mean(x)
    if x is not None and batch_size[0] > 1 and y is not None and mean_res > 0:
        x = x + 1
    if mean_res > 0 and (x is not None and batch_size[0] > 1) and y is not None:
        x = x - 1
    return x


@case(f32(4, 2, seed=19), src="Paddle ifelse_simple_func.py: if_with_and_or_4")
def if_with_and_or_4(x, y=None):
    batch_size = x.shape
    mean_res = np.mean(x)
    if (x is not None and batch_size[0] > 1) or (y is not None and mean_res > 0):
        x = x + 1
    if (x is not None or batch_size[0] > 1) and (y is not None or mean_res > 0):
        x = x - 1
    return x


@case(f32(3, 3, lo=0.1, hi=1, seed=20), src="Paddle ifelse_simple_func.py: if_tensor_case")
def if_tensor_case(x):
    mean = np.mean(x)
    if mean != 0:
        for i in range(0, 10):
            if i > 5:
                x += 1
                break
            x += 1
    else:
        for i in range(0, 37):
            x += 1
            break
    if mean > 1 and x is not None or 2 > 1:
        x -= 1
    if not (x[0][0] != 0 and (mean * x)[0][0] != 0):
        x += 1
    return x


@case(f32(3, seed=21), src="Paddle ifelse_simple_func.py: dyfunc_ifelse_ret_int1")
def ifelse_ret_int1(x):
    index = 0
    pred = np.array([1])
    if pred:
        y = x[index] + 1
        index = index + 1
        return y, index
    else:
        y = x[index] + 2
        index = index + 1
        return y, index


@case(f32(3, seed=22), src="Paddle ifelse_simple_func.py: dyfunc_ifelse_ret_int3")
def ifelse_ret_int3(x):
    index = 0
    if x[0] > 2:
        y = x[index] + 1
        index = index + 1
        return y
    else:
        y = x[index] + 2
        return y


@case(f32(4, 4, seed=23), src="Paddle ifelse_simple_func.py: dyfunc_empty_nonlocal")
def empty_nonlocal(x):
    flag = True
    if flag:
        print("It's a test for empty nonlocal stmt")
    out = x * 2
    return out

# ---- Paddle test_return.py ------------------------------------------------------------------------


@case(ONE32, src="Paddle dygraph_to_static/test_return.py: test_return_base")
def return_base(x):
    return x


@case(ONE32, src="Paddle test_return.py: test_inside_func_base")
def inside_func_base(x):
    def inner_func(x):
        return x
    return inner_func(x)


@case(ONE32, src="Paddle test_return.py: test_return_if")
def return_if(x):
    if x < 0:
        x -= 1
        return -x
    x += 3
    return x


@case(ONE32, src="Paddle test_return.py: test_return_if_else")
def return_if_else(x):
    if x > 0:
        x += 10086
        return x
        x -= 3
    else:
        x += 6666
        return x
        x -= 8888


@case(ONE32, src="Paddle test_return.py: test_return_in_while")
def return_in_while(x):
    i = np.zeros(1, dtype=np.int32)
    while i < 10:
        i += 1
        if i > 5:
            x += 110
            return x
        x += i
    return x


@case(ONE32, src="Paddle test_return.py: test_return_in_for")
def return_in_for(x):
    for i in range(10):
        if i <= 4:
            x += 1
            continue
        else:
            return x + 10086
    return x - 1


@case(ONE32, src="Paddle test_return.py: test_recursive_return")
def recursive_return(x):
    return return_base(x)


@case(ONE32, src="Paddle test_return.py: test_return_different_length_if_body")
def return_different_length_if_body(x):
    y = x + 1
    if x > 0:
        return x, y
    else:
        return x, y


@case(ONE32, src="Paddle test_return.py: test_return_tuple_one_value")
def return_tuple_one_value(x):
    x = x + 1
    return (x,)


@case(ONE32, src="Paddle test_return.py: test_return_tuple_many_values")
def return_tuple_many_values(x):
    x = x + 1
    y = x + 2
    z = x + 3
    return x, y, z


@case(ONE32, src="Paddle test_return.py: test_return_without_paddle_cond")
def return_without_cond(x):
    ret = x * 1
    for i in range(5):
        if i > 2:
            return ret
    return ret - 1


@case(np.array([3], dtype=np.int32), src="Paddle test_return.py: test_return_in_while_2 (two returns in a loop)")
def return_in_while_2(x):
    while True:
        a = 12
        return 12
    return 10


@case(ONE32, src="Paddle test_return.py: test_return_if_elif_else")
def return_if_elif_else(x):
    if x > 0:
        x += 1
        return x
    elif x < 0:
        x -= 1
        return x
    else:
        x += 5
        return x


@case(ONE32, src="Paddle test_return.py: test_diff_return (a dict result)")
def return_dict(x):
    y = x + 1
    return {"x": x, "y": y}


@case(f32(3, seed=24), src="Paddle test_return.py: test_return_nested_if")
def return_nested_if(x):
    if x[0] > 0:
        if x[1] > 0:
            return x * 2
        return x * 3
    return x

# ---- Paddle test_list.py --------------------------------------------------------------------------


@case(f32(3, seed=25), src="Paddle dygraph_to_static/test_list.py: test_list_append_without_control_flow")
def list_append_without_control_flow(x):
    a = []
    a.append(x)
    return a[0]


@case(f32(3, seed=26), src="Paddle test_list.py: test_list_append_in_if")
def list_append_in_if(x):
    a = []
    if np.mean(x) > 0:
        a.append(x)
    else:
        a.append(np.full([3], 1, dtype=np.float32))
    return a[0]


@case(f32(3, seed=27), 3, src="Paddle test_list.py: test_list_append_in_for_loop")
def list_append_in_for_loop(x, iter_num):
    a = []
    for i in range(3):
        a.append(x)
    return a[0]


@case(f32(4, seed=28), src="Paddle test_list.py: test_list_append_in_for_subscript")
def list_append_in_for_subscript(x):
    iter_num = x.shape[0]
    a = []
    for i in range(iter_num):
        x = x + 1
        a.append(x)
    out = np.stack(a)
    return out[0]


@case(f32(4, seed=29), src="Paddle test_list.py: test_list_append_in_while_loop_subscript")
def list_append_in_while_loop_subscript(x):
    iter_num = x.shape[0]
    a = []
    i = 0
    while i < iter_num:
        x = x + 1
        a.append(x)
        i += 1
    out = np.stack(a)
    return out[0]


@case(f32(3, seed=30), src="Paddle test_list.py: test_list_pop_without_control_flow_1")
def list_pop_without_control_flow(x):
    a = []
    a.append(x)
    a.append(x + 1)
    b = a.pop()
    return b


@case(f32(3, seed=31), src="Paddle test_list.py: test_list_pop_in_if")
def list_pop_in_if(x):
    a = []
    b = [x * 2 + (x + 1)]
    if x[0] > 0:
        a.append(x)
        b.append(x + 1)
        a.append(np.full([3], 1, dtype=np.float32))
    else:
        a.append(x + 1)
        b.append(x - 1)
        a.append(np.full([3], 2, dtype=np.float32))
    item1 = a.pop()
    return item1, b[-1]


@case(f32(3, seed=32), src="Paddle test_list.py: test_list_in_comprehension")
def list_comprehension(x):
    ys = [x[i] * 2 for i in range(len(x))]
    return ys[1] + ys[2]


@case(f32(4, seed=33), src="Paddle test_list.py: a filtered comprehension's length")
def list_comprehension_filter(x):
    pos = [v for v in x if v > 0]
    return len(pos)

# ---- Paddle test_for_enumerate.py, test_logical.py, test_closure.py -------------------------------------


@case(i32(1, 2, 3), src="Paddle dygraph_to_static/test_for_enumerate.py: for_iter_list")
def for_iter_array(x_array):
    z = 0
    for x in x_array:
        z = z + x
    return z


@case(i32(1, 2, 3), src="Paddle test_for_enumerate.py: for_enumerate_list")
def for_enumerate_array(x_array):
    z = 0
    for i, x in enumerate(x_array):
        z = z + x + i
    return z


@case(f32(3, 4, seed=34), src="Paddle test_for_enumerate.py: for_iter_var (rows)")
def for_iter_rows(x):
    z = np.zeros(4, dtype=np.float32)
    for row in x:
        z = z + row
    return z


@case(f32(3, 4, seed=35), src="Paddle test_for_enumerate.py: for_enumerate_var_numpy_with_break")
def for_enumerate_rows_break(x):
    y = 0.0
    z = 0.0
    for i, row in enumerate(x):
        y = y + row[0]
        z = z + i
        if i > 1:
            break
    return y, z


@case(f32(3, 4, seed=36), src="Paddle test_for_enumerate.py: for_enumerate_var_numpy_with_continue")
def for_enumerate_rows_continue(x):
    y = 0.0
    z = 0
    for i, row in enumerate(x):
        y = y + row[0]
        z = z + i
        if i > 1:
            continue
        y = y + 10
    return y, z


@case(f32(3, seed=37), f32(3, seed=38), src="Paddle test_for_enumerate.py: for_zip")
def for_zip(x, y):
    s = 0.0
    for a, b in zip(x, y):
        s += a * b
    return s


@case(f32(3, seed=39), src="Paddle test_for_enumerate.py: for_iter_var_idx (rows of a slice)")
def for_iter_slice(x):
    z = 0.0
    for v in x[1:]:
        z = z + v
    return z


@case(np.array([1], dtype=np.int64), src="Paddle dygraph_to_static/test_logical.py: test_logical_not")
def logical_not(x):
    if not x:
        x = x - 1
    else:
        x = x * 2
    return x


@case(np.array([3], dtype=np.int64), src="Paddle test_logical.py: test_logical_not_2")
def logical_not_2(x):
    y = None
    if y is not None and not y:
        x = x - 1
    else:
        x = x + 1
    return x


@case(np.array([3], dtype=np.int64), src="Paddle test_logical.py: test_logical_and_or")
def logical_and_or(x):
    a = x > 1
    b = x < 5
    if a and b:
        x = x * 2
    if a or x > 100:
        x = x + 1
    return x


@case(np.array([3], dtype=np.int64), src="Paddle test_logical.py: test_shape_equal")
def shape_equal(x):
    y = np.zeros([1, 2, 3])
    if y.shape == (1, 2, 3):
        return x + 1
    else:
        return x - 1


@case(f32(3, seed=40), src="Paddle dygraph_to_static/test_closure.py: test_closure")
def closure(x):
    y = x + 1

    def add(z):
        return y + z
    return add(x)


@case(f32(3, seed=41), src="Paddle test_closure.py: test_lambda")
def lambda_call(x):
    f = lambda a, b: a * b + 1
    return f(x, x)


@case(f32(3, seed=42), src="Paddle test_closure.py: nested def with a loop")
def nested_def_loop(x):
    def power(v, n):
        out = v * 0 + 1
        for i in range(n):
            out = out * v
        return out
    return power(x, 3)


@case(f32(3, seed=43), src="Paddle test_closure.py: test_global (reads a module constant)")
def read_module_constant(x):
    return x * LIMIT + BATCH


# ---- MindSpore tests/st/control ---------------------------------------------------------------------


@case(0, 1, 0, src="MindSpore tests/st/control: IfInWhileNet")
def if_in_while_net(x, y, i):
    out = x
    while i < 3:
        if x + i < y:
            out = out + x
        else:
            out = out + y
        out = out + 1
        i = i + 1
    return out


@case(np.array([2], dtype=np.int32), np.array([5], dtype=np.int32), src="MindSpore tests/st/control/test_while.py: while_by_while")
def while_by_while(x, y):
    z = x + y
    while x < y:
        x = x + 1
    while z > x:
        z = z - 1
    return x + z


@case(np.array([2], dtype=np.int32), np.array([8], dtype=np.int32), src="MindSpore tests/st/control: while_in_while")
def while_in_while(x, y):
    out = x * 0
    while x < y:
        z = x
        while z < y:
            out = out + z
            z = z + 2
        x = x + 1
    return out


@case(np.array([1], dtype=np.int32), np.array([4], dtype=np.int32), src="MindSpore tests/st/control: if_by_if")
def if_by_if(x, y):
    if x < y:
        x = x + 2
    if x > y:
        x = x - 1
    else:
        y = y + x
    return x + y


@case(np.array([3.0], dtype=np.float32), np.array([2.0], dtype=np.float32), src="MindSpore tests/st/control: if_in_if")
def if_in_if(x, y):
    z = x
    if x > y:
        z = x * 2
        if z > 5:
            z = z - y
        else:
            z = z + y
    return z


@case(np.array([2.0], dtype=np.float32), src="MindSpore tests/st/control/test_cont_break.py: for with break and continue")
def ms_for_break_continue(x):
    for i in range(10):
        if i % 2 == 0:
            continue
        x = x * 1.5
        if x > 20:
            break
    return x


@case(np.array([3], dtype=np.int32), src="MindSpore tests/st/control: while_in_if")
def while_in_if(x):
    if x > 2:
        while x < 10:
            x = x + 3
    else:
        x = x - 1
    return x


@case(np.array([3], dtype=np.int32), src="MindSpore tests/st/control: for_in_while")
def for_in_while(x):
    out = x * 0
    while x < 6:
        for i in range(3):
            out = out + i
        x = x + 1
    return out


@case(np.array([1], dtype=np.int32), src="MindSpore tests/st/control: for_in_if")
def for_in_if(x):
    if x > 0:
        for i in range(4):
            x = x * 2
    return x


@case(np.array([5], dtype=np.int32), src="MindSpore tests/st/control: if_in_for")
def if_in_for(x):
    for i in range(6):
        if i > x:
            x = x + 1
        elif i == 2:
            x = x - 1
    return x


@case(np.array([2.0], dtype=np.float32), np.array([3.0], dtype=np.float32), src="MindSpore tests/st/control: while with a tensor condition and return")
def while_return_in_if(x, y):
    while x < 10:
        if x * y > 30:
            return x
        x = x + 1
    return x * 0


@case(f32(2, 3, seed=44), src="MindSpore tests/st/control: if_in_while with a reduction")
def ms_while_reduce(x):
    s = x.sum()
    n = 0
    while s < 20:
        x = x + 1
        s = x.sum()
        n += 1
    return x, n


@case(np.array([1, 2, 3], dtype=np.int32), src="MindSpore tests/ut/python/graph_syntax: for over a tuple")
def for_over_tuple(x):
    out = x * 0
    for w in (1, 2, 3):
        out = out + x * w
    return out


@case(np.array([3], dtype=np.int32), src="MindSpore graph_syntax: tuple swap in a loop (fibonacci)")
def tuple_swap_fib(n):
    a, b = 0, 1
    i = 0
    while i < n:
        a, b = b, a + b
        i += 1
    return a


@case(np.array([2.0, -1.0, 3.0], dtype=np.float32), src="MindSpore graph_syntax: conditional expression")
def if_exp(x):
    y = x * 2 if x.sum() > 0 else x * -2
    return y


@case(np.array([4], dtype=np.int32), src="MindSpore graph_syntax: assert in graph mode")
def ms_assert(x):
    assert x > 0, "x must be positive"
    return x * 2


@case(np.array([2], dtype=np.int32), src="MindSpore graph_syntax: a dict in graph mode")
def ms_dict(x):
    d = {"a": x, "b": x + 1}
    return d["a"] + d["b"]


@case(np.array([2], dtype=np.int32), src="MindSpore graph_syntax: try/except")
def ms_try(x):
    try:
        y = x + 1
    except ValueError:
        y = x
    return y


@case(np.array([2], dtype=np.int32), src="MindSpore graph_syntax: with")
def ms_with(x):
    with np.errstate(all="ignore"):
        y = x + 1
    return y


@case(np.array([2], dtype=np.int32), src="MindSpore graph_syntax: a set in graph mode")
def ms_set(x):
    s = {1, 2}
    return x + len(s)


@case(np.array([2], dtype=np.int32), src="MindSpore graph_syntax: recursion")
def ms_recursion(x):
    if x > 0:
        return ms_recursion(x - 1)
    return x


@case(np.array([2], dtype=np.int32), src="MindSpore graph_syntax: a call of a Python function")
def ms_python_call(x):
    return np.asarray(sorted([3, 1])) + x


@case(np.array([3], dtype=np.int32), src="MindSpore graph_syntax: a list grown in a while loop, no bound")
def ms_unbounded_list(n):
    xs = []
    i = 0
    while i < n:
        xs.append(i)
        i += 1
    return np.stack(xs)


@case(np.array([2.0], dtype=np.float32), src="MindSpore graph_syntax: a value whose type changes across branches")
def ms_type_changes(x):
    if x > 0:
        y = x
    else:
        y = np.zeros(3, dtype=np.float32)
    return y

# ---- PyTorch torch.cond / while_loop tests ------------------------------------------------------------


@case(f32(4, seed=45), src="PyTorch test/functorch/test_control_flow.py: cond true_fn/false_fn sin/cos")
def torch_cond_sin_cos(x):
    if x.sum() > 0:
        return np.sin(x)
    return np.cos(x)


@case(f32(4, seed=46), f32(4, seed=47), src="PyTorch test_control_flow.py: cond with two operands")
def torch_cond_two_operands(x, y):
    if x.sum() > y.sum():
        return x + y, x * y
    else:
        return x - y, x / (np.abs(y) + 1)


@case(np.array(3, dtype=np.int64), f32(3, seed=48), src="PyTorch test_control_flow.py: while_loop simple_with_linear (count down)")
def torch_while_countdown(it, x):
    while it > 0:
        it = it - 1
        x = x + 1
    return it, x


@case(np.array(0, dtype=np.int64), f32(3, seed=49), src="PyTorch test_control_flow.py: while_loop nested")
def torch_while_nested(outer, x):
    while outer < 3:
        inner = 0
        while inner < 2:
            x = x * 1.5
            inner += 1
        outer = outer + 1
    return x


@case(f32(4, seed=50), src="PyTorch test_control_flow.py: cond inside a loop (fori)")
def torch_cond_in_loop(x):
    for i in range(4):
        if x[i] > 0:
            x[i] = x[i] * 2
        else:
            x[i] = 0
    return x


@case(f32(3, 3, seed=51), f32(3, seed=52), src="PyTorch test_control_flow.py: while_loop with matmul")
def torch_while_matmul(w, h):
    i = 0
    while i < 5:
        h = np.tanh(w @ h)
        i += 1
    return h


@case(f32(4, seed=53), src="PyTorch test_control_flow.py: cond on a shape (static)")
def torch_cond_shape(x):
    if x.shape[0] > 3:
        return np.cos(x)
    return np.sin(x)


@case(f32(5, seed=54), src="PyTorch test_control_flow.py: nested cond")
def torch_nested_cond(x):
    if x.sum() > 0:
        if x.max() > 0.5:
            return x * 2
        else:
            return x * 3
    else:
        if x.min() < -0.5:
            return x - 1
        return x + 1


@case(f32(5, seed=55), src="PyTorch test_control_flow.py: while_loop with an int carry and argmax")
def torch_while_argmax(x):
    k = 0
    while x.max() > 0.1 and k < 10:
        j = x.argmax()
        x[j] = x[j] - 0.5
        k += 1
    return x, k


@case(f32(4, seed=56), src="PyTorch test_control_flow.py: cond with a closure constant")
def torch_cond_closure(x):
    c = 2.5
    if x.mean() > 0:
        return x * c
    return x / c

# ---- JAX lax.while_loop / fori_loop / cond / switch tests --------------------------------------------------


@case(10, src="JAX tests/lax_control_flow_test.py: testWhileWithTuple (count to limit)")
def jax_while_count(limit):
    i = 0
    acc = 0
    while i < limit:
        acc += i
        i += 1
    return acc


@case(np.array(5, dtype=np.int32), src="JAX lax_control_flow_test.py: testWhileLoop factorial")
def jax_factorial(n):
    total = 1
    while n > 0:
        total = total * n
        n = n - 1
    return total


@case(np.array(27, dtype=np.int32), src="JAX lax_control_flow_test.py: collatz (testWhileLoopNested)")
def jax_collatz(n):
    steps = 0
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


@case(f32(5, seed=57), src="JAX lax_control_flow_test.py: testForiLoopBasic")
def jax_fori_sum(x):
    total = 0.0
    for i in range(len(x)):
        total = total + x[i]
    return total


@case(np.array(3, dtype=np.int32), src="JAX lax_control_flow_test.py: testSwitch (branch index)")
def jax_switch(i):
    if i == 0:
        out = 1.0
    elif i == 1:
        out = 2.0
    elif i == 2:
        out = 4.0
    else:
        out = -1.0
    return out


@case(f32(3, seed=58), np.array(1, dtype=np.int32), src="JAX lax_control_flow_test.py: testCond with operands")
def jax_cond_operands(x, p):
    if p > 0:
        y = x * 2.0
    else:
        y = x - 1.0
    return y


@case(np.array(48, dtype=np.int32), np.array(18, dtype=np.int32), src="JAX lax_control_flow_test.py: gcd while loop")
def jax_gcd(a, b):
    while b != 0:
        a, b = b, a % b
    return a


@case(np.array(20, dtype=np.int32), src="JAX lax_control_flow_test.py: testWhileLoopBatched (primes below n)")
def jax_count_primes(n):
    count = 0
    k = 2
    while k < n:
        d = 2
        prime = True
        while d * d <= k:
            if k % d == 0:
                prime = False
                break
            d += 1
        if prime:
            count += 1
        k += 1
    return count


@case(f32(4, 4, seed=59), src="JAX lax_control_flow_test.py: testForiLoopTupleState (nested fori)")
def jax_nested_fori(m):
    acc = 0.0
    for i in range(4):
        for j in range(i + 1):
            acc = acc + m[i, j]
    return acc


@case(np.array(2.0, dtype=np.float32), src="JAX lax_control_flow_test.py: newton sqrt (while with tolerance)")
def jax_newton_sqrt(a):
    x = a
    it = 0
    while abs(x * x - a) > 1e-5 and it < 50:
        x = 0.5 * (x + a / x)
        it += 1
    return x


@case(f32(6, seed=60), src="JAX lax_control_flow_test.py: scan-style cumulative max")
def jax_cummax(x):
    out = np.zeros(6, dtype=np.float32)
    best = x[0]
    for i in range(6):
        best = max(best, x[i])
        out[i] = best
    return out


@case(f32(5, seed=61), src="JAX lax_control_flow_test.py: bisection with while_loop")
def jax_bisect(c):
    lo = np.float32(0.0)
    hi = np.float32(4.0)
    target = np.float32(2.0)
    for _ in range(30):
        mid = (lo + hi) / 2
        if mid * mid > target:
            hi = mid
        else:
            lo = mid
    return lo + c[0] * 0


@case(f32(3, 3, seed=62), src="JAX lax_control_flow_test.py: power iteration")
def jax_power_iteration(a):
    m = a @ a.T
    v = np.ones(3, dtype=np.float32)
    for _ in range(20):
        w = m @ v
        v = w / np.sqrt(np.sum(w * w))
    return v @ (m @ v)


@case(f32(8, seed=63), src="JAX lax_control_flow_test.py: fori with dynamic slice windows")
def jax_window_sums(x):
    out = np.zeros(6, dtype=np.float32)
    for i in range(6):
        out[i] = np.sum(x[i:i + 3])
    return out


@case(np.array([3, 1, 2], dtype=np.int32), src="JAX lax_control_flow_test.py: while over an index array")
def jax_chase(perm):
    i = 0
    steps = 0
    while True:
        i = perm[i] % 3
        steps += 1
        if i == 0 or steps > 10:
            break
    return steps


@case(f32(4, seed=64), src="JAX lax_control_flow_test.py: cond of a reduction with math")
def jax_cond_math(x):
    n = float(np.sum(x * x))
    if n > 1.0:
        return x / math.sqrt(n)
    return x


# ---- kernels written in numpy style --------------------------------------------------------------------


@case(f32(5, 3, seed=65), f32(3, seed=66), src="greedy scoring (Paddle seq2seq beam test, shape)")
def score_rows(m, q):
    best = -1
    best_score = -1e9
    for i in range(m.shape[0]):
        s = np.dot(m[i], q)
        if s > best_score:
            best_score = s
            best = i
    return best, best_score


@case(f32(6, seed=67), src="numpy-style argmax with np.where")
def where_clip(x):
    y = np.where(x > 0, x, 0.1 * x)
    return np.clip(y, -0.05, 0.5)


@case(f32(4, 3, seed=68), src="numpy-style softmax rows")
def softmax_rows(x):
    out = np.zeros((4, 3), dtype=np.float32)
    for i in range(4):
        e = np.exp(x[i] - np.max(x[i]))
        out[i] = e / np.sum(e)
    return out


@case(f32(4, 3, seed=69), src="axis reductions")
def axis_reductions(x):
    return x.sum(axis=0), np.max(x, axis=1), np.argmax(x, axis=1)


@case(f32(3, 3, seed=70), src="matrix transpose and matmul")
def transpose_matmul(a):
    return a.T @ a


@case(f32(4, seed=71), src="astype and integer arithmetic")
def astype_ints(x):
    k = (x * 10).astype(np.int32)
    s = 0
    for v in k:
        if v % 2 == 0:
            s += v
    return s


@case(f32(5, seed=72), src="running mean with a list and stack")
def running_mean(x):
    acc = []
    s = 0.0
    for i, v in enumerate(x):
        s += v
        acc.append(s / (i + 1))
    return np.stack(acc)


@case(f32(6, seed=73), src="bubble sort (in place)")
def bubble_sort(x):
    n = len(x)
    for i in range(n):
        for j in range(n - 1 - i):
            if x[j] > x[j + 1]:
                t = x[j]
                x[j] = x[j + 1]
                x[j + 1] = t
    return x


@case(f32(4, 4, seed=74), src="clamped accumulate with min/max builtins")
def clamp_accumulate(m):
    total = 0.0
    for i in range(4):
        total = min(max(total + m[i].sum(), -1.0), 1.0)
    return total


@case(np.array([5, 3, 8, 1], dtype=np.int64), src="integer division and modulo")
def int_div_mod(x):
    out = np.zeros(4, dtype=np.int64)
    for i in range(4):
        out[i] = x[i] // 2 + x[i] % 3
    return out


@case(f32(4, seed=75), src="augmented assignment on a row")
def row_aug(x):
    y = np.zeros((2, 4), dtype=np.float32)
    for i in range(2):
        y[i] += x * (i + 1)
    return y


@case(f32(3, seed=76), src="chained comparison")
def chained_compare(x):
    n = 0
    for v in x:
        if -0.5 < v < 0.5:
            n += 1
    return n


@case(f32(3, seed=77), src="bitwise and on bool arrays")
def bool_and(x):
    m = (x > -0.5) & (x < 0.5)
    return np.where(m, x, 0)


@case(f32(3, seed=78), src="a slice with a step")
def slice_step(x):
    return x[::2]


@case(f32(3, seed=79), src="for ... else")
def for_else(x):
    for v in x:
        if v > 10:
            break
    else:
        return x * 0
    return x


@case(np.array([3, 5, 7, 9], dtype=np.int32), src="while ... else (Python's prime search idiom)")
def while_else(xs):
    found = -1
    i = 0
    while i < len(xs):
        if xs[i] % 2 == 0:
            found = i
            break
        i += 1
    else:
        found = 100
    return found


@case(f32(4, 3, seed=81), src="for ... else inside a for (only the inner break skips the else)")
def nested_for_else(m):
    hits = 0
    for row in m:
        for v in row:
            if v > 0.9:
                break
        else:
            hits += 1
    return hits


@case(f32(3, seed=80), src="a keyword argument and a default")
def kw_default(x, scale=2.0, shift=1):
    return x * scale + shift


@case(np.array(3, dtype=np.int32), src="reversed range")
def reversed_range(n):
    s = 0
    for i in reversed(range(n)):
        s = s * 10 + i
    return s


# ---- running them ----------------------------------------------------------------------------


def fresh(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


def as_tuple(r):
    return r if isinstance(r, tuple) else (r,)


def run(fn, args, backend="cpu"):
    """("taken", None) when @cfx.jit agrees with Python, ("refused", reason) when the
    translation refuses fn; AssertionError when the two disagree."""
    import cfx
    want = as_tuple(fn(*fresh(args)))
    try:
        j = cfx.jit(fn, backend=backend)
        got = as_tuple(j(*fresh(args)))
    except cfx.JitError as e:
        first = str(e).splitlines()[0]
        return "refused", first.split(": error: ", 1)[-1]
    assert len(got) == len(want), "%s: %d results, Python gives %d" % (fn.__name__, len(got), len(want))
    for k, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g)
        w = np.asarray(w)
        assert g.shape == w.shape, "%s result %d: shape %s, Python gives %s" % (fn.__name__, k, g.shape, w.shape)
        if w.dtype == bool or g.dtype == bool:
            assert (g == w).all(), "%s result %d: %s, Python gives %s" % (fn.__name__, k, g, w)
        else:
            assert np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-4, atol=1e-5), \
                "%s result %d: %s, Python gives %s" % (fn.__name__, k, g, w)
    return "taken", None


def main():
    taken = []
    refused = []
    for fn, args, src in CASES:
        status, why = run(fn, args)
        (taken if status == "taken" else refused).append((fn.__name__, src, why))
    print("cfx.jit corpus: %d functions, %d taken (agree with Python), %d refused"
          % (len(CASES), len(taken), len(refused)))
    for name, src, why in refused:
        print("  refused %-34s %s" % (name, why))
    return taken, refused


if __name__ == "__main__":
    main()
