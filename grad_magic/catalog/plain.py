"""Messages of the generic card: what torch's message means, in plain words (rules/plain.py), and what the
card saw on the way to the error."""
from __future__ import annotations

from typing import Dict

MESSAGES: Dict[str, Dict[str, str]] = {
    "generic.via": {
        "en": "It was raised inside `{call}`, which the marked line called.",
        "zh": "错误在 `{call}` 内部抛出，由标出的那一行调用。",
    },
    "generic.worker": {
        "en": "It was raised in a DataLoader worker process, which has ended: its variables cannot be shown. With "
              "`num_workers=0` the same error is raised in this process, where %%gradcheck shows them.",
        "zh": "错误发生在 DataLoader 的工作进程中，该进程已结束，无法显示其变量。设置 `num_workers=0` 后，同样的错误会在"
              "本进程中出现，%%gradcheck 便能显示这些变量。",
    },
    "opshape.operands": {
        "en": "The operation on line {lineno} was given {shapes}.",
        "zh": "第 {lineno} 行的运算收到的是 {shapes}。",
    },
    "opshape.layer": {
        "en": "The layer is {layer}, built on line {lineno}: the sizes it expects are set there.",
        "zh": "该层是 {layer}，在第 {lineno} 行构建：它期望的大小就在那里设定。",
    },
    "opshape.state_made": {
        "en": "Line {lineno} made the hidden state for a batch of {batch}: `{code}`.",
        "zh": "第 {lineno} 行按批次大小 {batch} 生成了隐藏状态：`{code}`。",
    },
    "opshape.reshape": {
        "en": "`.reshape(...)` gives the same values and copies the memory only when it must.",
        "zh": "`.reshape(...)` 得到的值相同，只在必要时才复制内存。",
    },
    "opshape.reshape_fix": {
        "en": "Use `.reshape(...)` instead of `.view(...)` on line {lineno}",
        "zh": "把第 {lineno} 行的 `.view(...)` 改为 `.reshape(...)`",
    },
    "plain.view_size.title": {
        "en": "Sizes [{dims}] do not make the {size} elements of the tensor reshaped",
        "zh": "大小 [{dims}] 与被重塑张量的 {size} 个元素不符",
    },
    "plain.view_size.means": {
        "en": "view() / reshape() keeps every element, so the sizes asked for must multiply to the tensor's {size} "
              "elements; [{dims}] does not. A size written for other inputs (another image size, another embed_dim "
              "or number of heads) is the usual cause.",
        "zh": "view() / reshape() 不会增减元素，所要求的各维大小之积必须等于张量的 {size} 个元素；[{dims}] 不满足。常见原因是"
              "某个大小是按别的输入写的（另一种图像尺寸、另一个 embed_dim 或头数）。",
    },
    "plain.broadcast.title": {
        "en": "Sizes {a} and {b} do not fit together in dimension {dim}",
        "zh": "第 {dim} 维的大小 {a} 和 {b} 不匹配",
    },
    "plain.broadcast.means": {
        "en": "An element-wise operation (`+`, `*`, a comparison, a loss) met two tensors with {a} and {b} entries "
              "in dimension {dim}. torch can stretch a dimension of size 1 to any size, never one size to another.",
        "zh": "逐元素运算（`+`、`*`、比较或损失函数）遇到两个张量，它们第 {dim} 维分别有 {a} 和 {b} 个元素。torch 只能把"
              "大小为 1 的维度扩展，不能把一个大小变成另一个大小。",
    },
    "plain.expand.title": {
        "en": "expand() cannot turn size {b} into {a} in dimension {dim}",
        "zh": "expand() 无法把第 {dim} 维的大小 {b} 变成 {a}",
    },
    "plain.expand.means": {
        "en": "expand() only stretches dimensions of size 1; dimension {dim} has {b} entries.",
        "zh": "expand() 只能扩展大小为 1 的维度；第 {dim} 维有 {b} 个元素。",
    },
    "plain.cat.title": {
        "en": "Tensors joined along dimension {dim} differ in another dimension ({a} and {b})",
        "zh": "沿第 {dim} 维拼接的张量在其他维度上大小不同（{a} 和 {b}）",
    },
    "plain.cat.means": {
        "en": "torch.cat joins tensors along dimension {dim}; every other dimension must agree, but tensor number "
              "{n} of the list has {b} where the first has {a}.",
        "zh": "torch.cat 沿第 {dim} 维拼接张量，其余各维必须一致；但列表中第 {n} 个张量在某一维是 {b}，而第一个是 {a}。",
    },
    "plain.dim_range.title": {
        "en": "Dimension {got} asked of a tensor with {n} dimensions",
        "zh": "对只有 {n} 维的张量使用了第 {got} 维",
    },
    "plain.dim_range.means": {
        "en": "The code asks for dimension {got}, but the tensor has only {n} (valid: -{n} to {hi}). It has "
              "fewer dimensions than expected, often no batch dimension.",
        "zh": "代码用到了第 {got} 维，但张量只有 {n} 维（有效范围 -{n} 到 {hi}）。张量的维数比预想的少，常见原因是缺少批次维。",
    },
    "plain.index_bounds.title": {
        "en": "Index {i} is past the end of dimension {dim} (size {size})",
        "zh": "索引 {i} 超出第 {dim} 维的范围（大小 {size}）",
    },
    "plain.index_bounds.means": {
        "en": "Dimension {dim} has {size} entries, so its indices run from 0 to {last}; the code asked for {i}.",
        "zh": "第 {dim} 维有 {size} 个元素，索引范围是 0 到 {last}；代码却用了 {i}。",
    },
    "plain.too_many_indices.title": {
        "en": "More indices than the tensor's {n} dimension(s)",
        "zh": "索引个数超过了张量的维数 {n}",
    },
    "plain.too_many_indices.means": {
        "en": "The code indexes more dimensions than the tensor has ({n}): it has fewer dimensions than expected "
              "(a scalar label, a squeezed batch).",
        "zh": "代码索引的维数多于张量实际的维数（{n}）：张量的维数比预想的少（例如标量标签，或被 squeeze 掉的批次维）。",
    },
    "plain.index_range.title": {
        "en": "An index is outside the table it looks up",
        "zh": "索引超出了查找表的范围",
    },
    "plain.index_range.means": {
        "en": "An index is negative or at least the size of the table it looks up. Usually a token id at or "
              "above an nn.Embedding's num_embeddings, or a padding id of -1.",
        "zh": "某个索引为负数，或不小于被查找表的大小。通常是词元 id 大于等于 nn.Embedding 的 num_embeddings，或填充 id 为 -1。",
    },
    "plain.index_dtype.title": {
        "en": "Indices must be integers",
        "zh": "索引必须是整数",
    },
    "plain.index_dtype.means": {
        "en": "Indices (an nn.Embedding's input, `idx` in `t[idx]`) must be integers (`torch.long`) or a "
              "boolean mask. These are floats: `.long()` where the ids are made.",
        "zh": "索引（nn.Embedding 的输入、`t[idx]` 中的 idx）必须是整数（`torch.long`）或布尔掩码。这里是浮点数：在生成 id 的地方加上 `.long()`。",
    },
    "plain.scalar.title": {
        "en": "A tensor with several values used as one number",
        "zh": "把含多个值的张量当作一个数使用",
    },
    "plain.scalar.means": {
        "en": "`.item()`, `float()` and `int()` need a tensor that holds exactly one value; this one holds more "
              "(a loss with reduction='none', a batch of predictions).",
        "zh": "`.item()`、`float()` 和 `int()` 要求张量恰好只有一个值；这里的张量有多个值（例如 reduction='none' 的损失，"
              "或一批预测值）。",
    },
    "plain.object_array.title": {
        "en": "A NumPy array of Python objects cannot become a tensor",
        "zh": "元素为 Python 对象的 NumPy 数组无法转换为张量",
    },
    "plain.object_array.means": {
        "en": "The array's dtype is `object`: its items are rows of different lengths or values of mixed types, "
              "which torch cannot store in one tensor. Give every row one length (pad them) and one numeric type.",
        "zh": "数组的 dtype 是 `object`：其元素是长度不同的行或类型混杂的值，torch 无法把它们放进一个张量。让每一行长度相同"
              "（填充）并使用同一种数值类型。",
    },
    "plain.ragged.title": {
        "en": "Rows of different lengths ({a} and {b}) cannot make one tensor",
        "zh": "长度不同（{a} 和 {b}）的行无法组成一个张量",
    },
    "plain.ragged.means": {
        "en": "The nested list is ragged: at depth {dim} one item has {a} elements and another {b}. A tensor needs "
              "every row the same length: pad the rows (torch.nn.utils.rnn.pad_sequence) or keep a list of tensors.",
        "zh": "嵌套列表参差不齐：第 {dim} 层中一个元素有 {a} 个值，另一个有 {b} 个。张量要求每行长度相同：对各行做填充"
              "（torch.nn.utils.rnn.pad_sequence），或保留为张量列表。",
    },
    "plain.layer_norm.title": {
        "en": "LayerNorm built for [{want}], given an input of size [{got}]",
        "zh": "LayerNorm 按 [{want}] 构建，输入的大小却是 [{got}]",
    },
    "plain.layer_norm.means": {
        "en": "A LayerNorm normalises the last dimensions of its input, which must equal the normalized_shape it "
              "was built with ([{want}]); the input's shape is [{got}].",
        "zh": "LayerNorm 对输入的最后几维做归一化，这几维必须等于构建时的 normalized_shape（[{want}]）；输入的形状是 [{got}]。",
    },
    "plain.batch_norm.title": {
        "en": "BatchNorm built for {want} features, given {got}",
        "zh": "BatchNorm 按 {want} 个特征构建，输入却有 {got} 个",
    },
    "plain.batch_norm.means": {
        "en": "A BatchNorm layer keeps one running mean per feature (its num_features, {want}) and reads the "
              "features from dimension 1 of its input, which has {got}.",
        "zh": "BatchNorm 层为每个特征保存一个滑动均值（num_features，共 {want} 个），并从输入的第 1 维读取特征，而输入的"
              "第 1 维是 {got}。",
    },
    "plain.batch_of_one.title": {
        "en": "BatchNorm in training mode was given a batch of one",
        "zh": "训练模式下的 BatchNorm 收到了只有一个样本的批次",
    },
    "plain.batch_of_one.means": {
        "en": "In training mode a BatchNorm needs more than one value per channel (input size [{size}]). "
              "Usually a DataLoader's last batch held one sample (`drop_last=True`), or one example met a model "
              "still in training mode (`model.eval()`).",
        "zh": "训练模式下 BatchNorm 的每个通道需要多于一个值（输入大小 [{size}]）。通常是 Data"
              "Loader 最后一批只有一个样本（`drop_last=True`），或对单个样本预测前没有 `mod"
              "el.eval()`。",
    },
    "plain.rnn_input.title": {
        "en": "RNN built for {want} input features, given {got}",
        "zh": "RNN 按 {want} 个输入特征构建，输入却有 {got} 个",
    },
    "plain.rnn_input.means": {
        "en": "An LSTM / GRU / RNN reads the last dimension of its input as each step's features. It was built "
              "with input_size={want}; the input has {got}.",
        "zh": "LSTM / GRU / RNN 把输入的最后一维当作每个时间步的特征数。它按 input_size={want} 构建，输入却是 {got}。",
    },
    "plain.rnn_state.title": {
        "en": "An RNN's {batched} input given {state} hidden state",
        "zh": "RNN 的输入是{batched}，隐藏状态却是 {state}",
    },
    "plain.rnn_state.means": {
        "en": "Given {batched} input, an LSTM / GRU needs its hidden state shaped (num_layers * directions, "
              "batch, hidden_size), whatever batch_first says. It was given {state} tensors.",
        "zh": "输入是{batched}时，LSTM / GRU 的隐藏状态形状必须是 (num_layers * 方向"
              "数, 批次, hidden_size)，与 batch_first 无关。这里给的是 {state} 张"
              "量。",
    },
    "plain.rnn_hidden.title": {
        "en": "An RNN's hidden state is shaped ({got}) where its input needs ({want})",
        "zh": "RNN 的隐藏状态形状是 ({got})，而它的输入需要 ({want})",
    },
    "plain.rnn_hidden.means": {
        "en": "An LSTM / GRU needs its hidden state shaped (num_layers * directions, batch, hidden_size), with the "
              "input's batch size. A state made for a full batch meets a shorter last batch this way.",
        "zh": "LSTM / GRU 的隐藏状态形状必须是 (num_layers * 方向数, 批次, hidden_size)，批次大小与输入相同。"
              "为完整批次生成的状态遇到较短的最后一个批次时，就会这样出错。",
    },
    "plain.too_small.title": {
        "en": "The feature map is smaller than the kernel",
        "zh": "特征图比卷积核还小",
    },
    "plain.too_small.means": {
        "en": "A convolution or pooling layer got an input of ({inp}) for a kernel or output of ({out}). The "
              "map shrank below the kernel: the images are smaller than the model expects.",
        "zh": "卷积或池化层的输入是 ({inp})，卷积核或输出是 ({out})。特征图已小于卷积核：图像比模型预期的小。",
    },
    "plain.pooled_size.title": {
        "en": "{op}() would make an output of size {out}",
        "zh": "{op}() 的输出大小会是 {out}",
    },
    "plain.pooled_size.means": {
        "en": "The pooling window (kernel_size) is longer than the dimension it pools. The kernel was read from "
              "another dimension, or the input is shorter than expected.",
        "zh": "池化窗口（kernel_size）比被池化的那一维还长。kernel_size 取自了别的维度，或输入比预期的短。",
    },
    "plain.conv_dims.title": {
        "en": "{op} given an input of size [{got}]",
        "zh": "{op} 收到的输入大小是 [{got}]",
    },
    "plain.conv_dims.means": {
        "en": "{op} takes {want} input: (channels, …) for one sample or (batch, channels, …) for a batch. This "
              "input has another number of dimensions: an extra one (patches or crops stacked on the batch), or "
              "one missing.",
        "zh": "{op} 接受 {want} 输入：单个样本是 (通道, …)，一批是 (批次, 通道, …)。这个输入的维数不对：多了一维（例如"
              "把图块或裁剪叠在批次上），或少了一维。",
    },
    "plain.view_stride.title": {
        "en": "view() on a tensor whose memory is not laid out in order",
        "zh": "对内存不连续的张量调用了 view()",
    },
    "plain.view_stride.means": {
        "en": "view() only relabels memory that is contiguous; after transpose(), permute() or some slicing it "
              "is not. `.reshape(...)` (or `.contiguous().view(...)`) copies when it must.",
        "zh": "view() 只能重新解释连续存储的内存；经过 transpose()、permute() 或某些切片后内存不再连续。`.reshape(...)`"
              "（或 `.contiguous().view(...)`）会在必要时复制。",
    },
    "plain.float_only.title": {
        "en": "{op}() needs a floating-point tensor, got {got}",
        "zh": "{op}() 需要浮点张量，得到的是 {got}",
    },
    "plain.float_only.means": {
        "en": "{op}() computes a fraction, so it needs a floating-point tensor; this one holds integers ({got}). "
              "`.float()` first.",
        "zh": "{op}() 的结果是小数，因此需要浮点张量；这个张量是整数（{got}）。先调用 `.float()`。",
    },
    "plain.cast.title": {
        "en": "A {res} result cannot be stored in a {out} tensor",
        "zh": "{res} 类型的结果无法存入 {out} 张量",
    },
    "plain.cast.means": {
        "en": "An in-place operation (`x /= 2`, `x.div_(…)`, `out=`) writes its result into the tensor it started "
              "from, which is {out}; the result is {res}. Use the out-of-place form (`x = x / 2`) or make the "
              "tensor {res} first.",
        "zh": "原地运算（`x /= 2`、`x.div_(…)`、`out=`）把结果写回原张量，而原张量是 {out}，结果却是 {res}。改用非原地写法"
              "（`x = x / 2`），或先把张量转成 {res}。",
    },
    "plain.where_mask.title": {
        "en": "torch.where needs a boolean condition, got {got}",
        "zh": "torch.where 的条件必须是布尔张量，得到的是 {got}",
    },
    "plain.where_mask.means": {
        "en": "torch.where's first argument is a mask of True / False (a comparison such as `x > 0.5`); it was "
              "given a {got} tensor.",
        "zh": "torch.where 的第一个参数是 True / False 掩码（例如 `x > 0.5` 这样的比较）；这里传入的是 {got} 张量。",
    },
    "plain.bmm.title": {
        "en": "bmm: the second tensor is [{got}, …], not [{want}, …]",
        "zh": "bmm：第二个张量是 [{got}, …]，而不是 [{want}, …]",
    },
    "plain.bmm.means": {
        "en": "torch.bmm multiplies (b, n, m) by (b, m, p). The second tensor's first two dimensions must be "
              "[{want}]; they are [{got}].",
        "zh": "torch.bmm 计算 (b, n, m) 乘以 (b, m, p)。第二个张量的前两维必须是 [{want}]，实际是 [{got}]。",
    },
    "plain.dot.title": {
        "en": "Two 1-D tensors of lengths {a} and {b} multiplied",
        "zh": "长度分别为 {a} 和 {b} 的两个一维张量相乘",
    },
    "plain.dot.means": {
        "en": "matmul of two 1-D tensors is a dot product, which needs equal lengths ({a} and {b}). A tensor "
              "meant to be 2-D may have lost a dimension.",
        "zh": "两个一维张量的 matmul 是点积，要求长度相同（{a} 和 {b}）。本应是二维的张量可能丢了一维。",
    },
    "plain.worker_died.title": {
        "en": "A DataLoader worker process died",
        "zh": "DataLoader 的工作进程意外退出",
    },
    "plain.worker_died.means": {
        "en": "A worker process ended without reporting an error: usually it ran out of shared memory (Docker, "
              "Colab) or was killed for using too much memory. With `num_workers=0` loading runs in this process "
              "and any error in it is shown here.",
        "zh": "工作进程在没有报告错误的情况下结束：通常是共享内存不足（Docker、Colab），或因内存占用过多被终止。设置 "
              "`num_workers=0` 后数据加载在本进程中进行，其中的错误会显示在这里。",
    },
    "plain.step_no_loss.title": {
        "en": "Lightning found no 'loss' key in the dict `training_step` returned",
        "zh": "Lightning 在 `training_step` 返回的 dict 里找不到 'loss' 键",
    },
    "plain.step_no_loss.means": {
        "en": "With automatic optimization Lightning calls backward() on the value under the key 'loss' of the "
              "dict `training_step` returns. Return the loss under 'loss'; other keys may stay.",
        "zh": "自动优化时，Lightning 对 `training_step` 返回的 dict 中 'loss' 键下的值调用 backward()。"
              "请把损失放在 'loss' 键下返回；其他键可以保留。",
    },
    "plain.step_output.title": {
        "en": "`training_step` returned something Lightning cannot train on",
        "zh": "`training_step` 返回了 Lightning 无法用于训练的值",
    },
    "plain.step_output.means": {
        "en": "With automatic optimization `training_step` must return the loss tensor, a dict holding it under "
              "'loss', or None to skip the batch. A number (a sum over an empty set of losses is 0) has no graph.",
        "zh": "自动优化时，`training_step` 必须返回损失张量、在 'loss' 键下含有损失的 dict，或返回 None 跳过该批次。"
              "一个数（对空的损失集合求和得到 0）没有计算图。",
    },
    "plain.step_returned": {
        "en": "It returned {value}.",
        "zh": "它返回了 {value}。",
    },
    "plain.none_attribute.title": {
        "en": "None where an object with `.{attr}` was expected",
        "zh": "需要带 `.{attr}` 的对象，得到的却是 None",
    },
    "plain.none_attribute.means": {
        "en": "A value on the marked line is None. Most often a function or forward() ends without `return`, or "
              "a method that works in place returned None (`list.append`).",
        "zh": "标出的那一行中有个值是 None。最常见的是函数或 forward() 结尾缺少 `return`，或原地修改的方法返回了 None（`list.append`）。",
    },
    "plain.not_callable.title": {
        "en": "A {type} called like a function",
        "zh": "把 {type} 当作函数调用",
    },
    "plain.not_callable.means": {
        "en": "The line calls a {type} as if it were a function or a layer. Usually a name that held a function or "
              "module was bound to its own result earlier (`loss = loss(out, y)`, `model = model(x)`).",
        "zh": "这一行把 {type} 当作函数或层来调用。通常是某个原本指向函数或模块的名字，之前被赋值成了它自己的结果"
              "（`loss = loss(out, y)`、`model = model(x)`）。",
    },
    "plain.unpack.title": {
        "en": "{want} names unpacked from a value that holds another number of items",
        "zh": "要解包出 {want} 个名字，但值中的元素个数不同",
    },
    "plain.unpack.means": {
        "en": "The line unpacks {want} names from a value with another number of items. The batch or output has "
              "another structure than the code assumes.",
        "zh": "这一行要从值中解包出 {want} 个名字，但值中的元素个数不同。批次或输出的结构与代码设想的不一样。",
    },
}
