"""Whole nn programs of the kind tutorials and training scripts contain, run with PyTorch and with ember: outputs,
gradients, reprs, state_dict keys, hook calls, warnings and error messages must agree."""
# the tutorials' code is kept as people write it (super(Net, self), % formatting, unused unpacked results)
# ruff: noqa: UP008, UP018, UP031, RUF059
import math
import re
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


# ---------------------------------------------------------------- harness

def _is_tensor(v):
    return type(v).__module__.split(".")[0] in ("torch", "ember") and hasattr(v, "detach") and hasattr(v, "dtype")


def _text(s):
    return s.replace("torch", "ember")


def _norm(v):
    """A library-neutral form of a program's result."""
    if _is_tensor(v):
        return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), v.detach().cpu().numpy())
    if isinstance(v, dict):
        return {k: _norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_norm(x) for x in v]
    if isinstance(v, str):
        return _text(v)
    if type(v).__module__.split(".")[0] in ("torch", "ember"):
        return _text(str(v))
    return v


def _compare(a, b, path, rtol, atol):
    if isinstance(a, tuple) and a and a[0] == "tensor":
        assert isinstance(b, tuple) and b[0] == "tensor", path
        assert a[1:3] == b[1:3], (path, a[1:3], b[1:3])
        if a[3].dtype.kind in "fc":
            np.testing.assert_allclose(a[3], b[3], rtol=rtol, atol=atol, err_msg=path)
        else:
            np.testing.assert_array_equal(a[3], b[3], err_msg=path)
    elif isinstance(a, dict):
        assert isinstance(b, dict) and list(a) == list(b), (path, list(a), list(b) if isinstance(b, dict) else b)
        for k in a:
            _compare(a[k], b[k], f"{path}.{k}", rtol, atol)
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), (path, a, b)
        for i, (x, y) in enumerate(zip(a, b)):
            _compare(x, y, f"{path}[{i}]", rtol, atol)
    elif isinstance(a, float):
        assert isinstance(b, float), (path, a, b)
        assert math.isclose(a, b, rel_tol=rtol, abs_tol=atol) or (math.isnan(a) and math.isnan(b)), (path, a, b)
    elif isinstance(a, str) and isinstance(b, str) and a != b:
        # printed numbers may differ in the last digit; the text around them may not
        na, nb = _NUM.findall(a), _NUM.findall(b)
        assert _NUM.sub("#", a) == _NUM.sub("#", b), (path, a, b)
        for x, y in zip(na, nb):
            assert math.isclose(float(x), float(y), rel_tol=1e-3, abs_tol=2e-4), (path, a, b)
    else:
        assert a == b, (path, a, b)


_NUM = re.compile(r"-?\d+\.\d*(?:e[-+]?\d+)?")


def _run(program, rtol=1e-4, atol=1e-5, **kw):
    results = []
    for lib in (torch, ember):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = program(lib, **kw)
        out["warnings"] = [f"{x.category.__name__}: {x.message}" for x in w]
        results.append(_norm(out))
    _compare(results[0], results[1], "result", rtol, atol)
    return results


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and text are what is compared
        return f"{type(e).__name__}: {e}"
    return "no error"


def _data(seed, *shape, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _set_weights(lib, model, seed=0, scale=0.3):
    """Loads the same deterministic weights into a model of either library (a state_dict numpy round trip)."""
    sd = model.state_dict()
    new = {}
    for i, (k, v) in enumerate(sd.items()):
        a = v.detach().cpu().numpy()
        if a.dtype.kind == "f":
            a = _data(seed + i, *a.shape, scale=scale)
            if k.endswith("running_var"):
                a = np.abs(a) + 0.5
        new[k] = lib.from_numpy(a.copy())
    result = model.load_state_dict(new)
    return list(sd), str(result)


def _grads(model):
    return {n: p.grad for n, p in model.named_parameters() if p.grad is not None}


# ---------------------------------------------------------------- the quickstart classifier

def quickstart(torch):
    nn = torch.nn
    DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset
    out = {}
    X = torch.from_numpy(np.abs(_data(1, 64, 1, 8, 8)))
    y = torch.from_numpy(np.random.default_rng(2).integers(0, 10, 64))
    train_dataloader = DataLoader(TensorDataset(X, y), batch_size=16)
    test_dataloader = DataLoader(TensorDataset(X[:32], y[:32]), batch_size=16)
    for Xb, yb in test_dataloader:
        out["batch"] = f"Shape of X [N, C, H, W]: {Xb.shape}; Shape of y: {yb.shape} {yb.dtype}"
        break
    device = "cuda" if torch.cuda.is_available() else "mps" if torch.backends.mps.is_available() else "cpu"
    out["device"] = f"Using {device} device"

    class NeuralNetwork(nn.Module):
        def __init__(self):
            super().__init__()
            self.flatten = nn.Flatten()
            self.linear_relu_stack = nn.Sequential(
                nn.Linear(8 * 8, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))

        def forward(self, x):
            x = self.flatten(x)
            logits = self.linear_relu_stack(x)
            return logits

    model = NeuralNetwork().to(device)
    out["repr"] = repr(model)
    out["keys"] = _set_weights(torch, model)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    log = []

    def train(dataloader, model, loss_fn, optimizer):
        size = len(dataloader.dataset)
        model.train()
        for batch, (X, y) in enumerate(dataloader):
            X, y = X.to(device), y.to(device)
            pred = model(X)
            loss = loss_fn(pred, y)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            if batch % 2 == 0:
                loss, current = loss.item(), (batch + 1) * len(X)
                log.append(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")

    def test(dataloader, model, loss_fn):
        size = len(dataloader.dataset)
        num_batches = len(dataloader)
        model.eval()
        test_loss, correct = 0, 0
        with torch.no_grad():
            for X, y in dataloader:
                X, y = X.to(device), y.to(device)
                pred = model(X)
                test_loss += loss_fn(pred, y).item()
                correct += (pred.argmax(1) == y).type(torch.float).sum().item()
        test_loss /= num_batches
        correct /= size
        log.append(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
        return test_loss, correct

    for t in range(3):
        log.append(f"Epoch {t+1}\n-------------------------------")
        train(train_dataloader, model, loss_fn, optimizer)
        out[f"test{t}"] = test(test_dataloader, model, loss_fn)
    out["log"] = log
    out["params"] = [f"Layer: {name} | Size: {param.size()} | Values : {param[:2]} \n"
                     for name, param in model.named_parameters()]
    x = torch.from_numpy(_data(5, 1, 8, 8))
    logits = model(x)
    pred_probab = nn.Softmax(dim=1)(logits)
    y_pred = pred_probab.argmax(1)
    out["pred"] = f"Predicted class: {y_pred}"
    out["logits_repr"] = repr(logits.detach().round(decimals=2))
    out["grad_fn"] = [logits.grad_fn.name(), pred_probab.grad_fn.name()]
    input_image = torch.from_numpy(_data(6, 3, 8, 8))
    flat_image = nn.Flatten()(input_image)
    layer1 = nn.Linear(in_features=64, out_features=20)
    hidden1 = layer1(flat_image)
    out["hidden_size"] = str(hidden1.size())
    out["relu_min"] = nn.ReLU()(hidden1).min().item() >= 0
    out["n_params"] = sum(p.numel() for p in model.parameters() if p.requires_grad)
    torch.save(model.state_dict(), "/tmp/_prog_nn_model.pth")
    model2 = NeuralNetwork().to(device)
    out["load"] = str(model2.load_state_dict(torch.load("/tmp/_prog_nn_model.pth", weights_only=True)))
    out["same"] = model2(x)
    return out


def test_quickstart():
    _run(quickstart)


# ---------------------------------------------------------------- "What is torch.nn really?"

def nn_really(torch):
    nn, F = torch.nn, torch.nn.functional
    out = {}
    x_train = torch.from_numpy(np.abs(_data(10, 64, 784)) / 3)
    y_train = torch.from_numpy(np.random.default_rng(11).integers(0, 10, 64))
    x_valid, y_valid = x_train[:32], y_train[:32]
    n, c = x_train.shape
    out["shapes"] = [str(x_train.shape), y_train.min().item(), y_train.max().item(), n, c]
    weights = torch.from_numpy(_data(12, 784, 10)) / math.sqrt(784)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)
    out["leaf"] = [weights.is_leaf, weights.grad_fn is None, bias.is_leaf]

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)

    bs = 16
    xb = x_train[0:bs]
    preds = model(xb)
    out["preds0"] = [preds[0], str(preds.shape)]

    def nll(input, target):
        return -input[torch.arange(target.shape[0]), target].mean()

    loss_func = nll
    yb = y_train[0:bs]
    out["loss0"] = loss_func(preds, yb)

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()

    out["acc0"] = accuracy(preds, yb)
    lr, epochs = 0.5, 2
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    out["manual"] = [loss_func(model(xb), yb), accuracy(model(xb), yb), weights, bias]
    out["ce"] = F.cross_entropy(xb @ weights + bias, yb)

    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.from_numpy(_data(13, 784, 10)) / math.sqrt(784))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias

    model = Mnist_Logistic()
    loss_func = F.cross_entropy
    out["logistic_loss"] = loss_func(model(xb), yb)

    def fit():
        for epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                loss = loss_func(model(xb), yb)
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= p.grad * lr
                    model.zero_grad()

    fit()
    out["logistic_fit"] = [loss_func(model(xb), yb), [p.grad for p in model.parameters()]]

    class Mnist_Logistic2(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)

    model = Mnist_Logistic2()
    _set_weights(torch, model, 20, scale=0.03)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    train_ds = torch.utils.data.TensorDataset(x_train, y_train)
    train_dl = torch.utils.data.DataLoader(train_ds, batch_size=bs)
    valid_dl = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x_valid, y_valid), batch_size=bs * 2)
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
        model.eval()
        with torch.no_grad():
            valid_loss = sum(loss_func(model(xb), yb) for xb, yb in valid_dl)
        out[f"valid{epoch}"] = [epoch, valid_loss / len(valid_dl)]

    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))

    model = Mnist_CNN()
    _set_weights(torch, model, 30)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = [loss_batch(model, loss_func, xb, yb, opt) for xb, yb in train_dl]
    out["cnn_losses"] = [l for l, _ in losses]
    out["cnn_grads_none"] = [p.grad is None for p in model.parameters()]

    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x):
        return x.view(-1, 1, 28, 28)

    model = nn.Sequential(
        Lambda(preprocess),
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1), nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    out["seq_repr"] = repr(model)
    out["seq_keys"] = _set_weights(torch, model, 40)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    out["seq_losses"] = [loss_batch(model, loss_func, xb, yb, opt)[0] for xb, yb in train_dl]
    out["seq_state"] = {k: v for k, v in opt.state_dict()["state"].items()}
    out["seq_groups"] = [{k: v for k, v in g.items()} for g in opt.state_dict()["param_groups"]]
    out["bad_view"] = _error(lambda: model(x_train[:3, :700]))
    return out


def test_nn_really():
    _run(nn_really, rtol=2e-4, atol=2e-5)


# ---------------------------------------------------------------- a CNN with BatchNorm and Dropout

def cnn_bn_dropout(torch):
    nn, F = torch.nn, torch.nn.functional
    out = {}

    class Net(nn.Module):
        def __init__(self, num_classes=10):
            super(Net, self).__init__()
            self.features = nn.Sequential(
                nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                nn.MaxPool2d(2, 2),
                nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16, momentum=None), nn.ReLU(inplace=True),
                nn.Dropout2d(0.25),
            )
            self.classifier = nn.Sequential(
                nn.Linear(16 * 4 * 4, 32), nn.BatchNorm1d(32), nn.ReLU(),
                nn.Dropout(p=0.5), nn.Linear(32, num_classes))

        def forward(self, x):
            x = self.features(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            return self.classifier(x)

    net = Net()
    out["repr"] = str(net)
    out["keys"] = _set_weights(torch, net, 50)
    out["buffers"] = [n for n, _ in net.named_buffers()]
    out["modules"] = [(n, type(m).__name__) for n, m in net.named_modules()]
    out["children"] = [type(m).__name__ for m in net.children()]
    out["training"] = [m.training for m in net.modules()]
    x = torch.from_numpy(_data(51, 4, 3, 16, 16))
    target = torch.tensor([1, 0, 4, 9])
    net.eval()
    out["training_eval"] = [m.training for m in net.modules()]
    y_eval = net(x)
    out["eval"] = y_eval
    out["eval_again_equal"] = torch.equal(net(x), y_eval)
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, weight_decay=1e-4)
    crit = nn.CrossEntropyLoss(label_smoothing=0.1)
    net(x)
    # dropout draws differ between libraries: compare the statistics, which do not depend on them
    out["bn_stats"] = {k: v for k, v in net.state_dict().items() if k.startswith("features.")}
    net.features[7].p = 0.0
    net.classifier[3].p = 0.0
    net.classifier[1].reset_running_stats()
    for step in range(3):
        opt.zero_grad()
        loss = crit(net(x), target)
        loss.backward()
        opt.step()
    out["bn_stats2"] = {k: v for k, v in net.state_dict().items() if "running" in k or "num_batches" in k}
    out["bn1_weight_grad_shape"] = str(net.features[1].weight.grad.shape)
    net.zero_grad()
    loss = crit(net(x), target)
    loss.backward()
    out["train_nodrop_loss"] = loss
    out["train_nodrop_grads"] = _grads(net)
    net.eval()
    out["eval2"] = net(x)
    drop = nn.Dropout(0.5)
    ones = torch.ones(2000)
    y = drop(ones)
    out["dropout_vals"] = sorted(set(y.tolist()))
    out["dropout_frac"] = abs((y == 0).float().mean().item() - 0.5) < 0.05
    drop.eval()
    out["dropout_eval"] = torch.equal(drop(ones), ones)
    out["drop_repr"] = [repr(drop), repr(nn.Dropout2d(0.25)), repr(nn.AlphaDropout(0.2))]
    bn = nn.BatchNorm1d(3)
    out["bn_one"] = _error(lambda: bn(torch.ones(1, 3)))
    out["bn_shape"] = _error(lambda: bn(torch.ones(2, 4)))
    out["bn_dim"] = _error(lambda: nn.BatchNorm2d(3)(torch.ones(2, 3)))
    out["conv_channels"] = _error(lambda: net(torch.ones(1, 4, 16, 16)))
    out["conv_small"] = _error(lambda: nn.Conv2d(3, 2, 5)(torch.ones(1, 3, 3, 3)))
    out["linear_mismatch"] = _error(lambda: net.classifier(torch.ones(2, 100)))
    out["pool_small"] = _error(lambda: F.max_pool2d(torch.ones(1, 1, 1, 1), 2))
    return out


def test_cnn_bn_dropout():
    _run(cnn_bn_dropout)


# ---------------------------------------------------------------- a VAE

def vae(torch):
    nn, F = torch.nn, torch.nn.functional
    out = {}

    class VAE(nn.Module):
        def __init__(self):
            super(VAE, self).__init__()
            self.fc1 = nn.Linear(64, 32)
            self.fc21 = nn.Linear(32, 4)
            self.fc22 = nn.Linear(32, 4)
            self.fc3 = nn.Linear(4, 32)
            self.fc4 = nn.Linear(32, 64)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps=None):
            std = torch.exp(0.5 * logvar)
            if eps is None:
                eps = torch.randn_like(std)
            return mu + eps * std

        def decode(self, z):
            h3 = F.relu(self.fc3(z))
            return torch.sigmoid(self.fc4(h3))

        def forward(self, x, eps=None):
            mu, logvar = self.encode(x.view(-1, 64))
            z = self.reparameterize(mu, logvar, eps)
            return self.decode(z), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction='sum')
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD

    model = VAE()
    out["keys"] = _set_weights(torch, model, 60)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = torch.from_numpy(np.random.default_rng(61).random((16, 1, 8, 8)).astype(np.float32))
    eps = torch.from_numpy(_data(62, 16, 4))
    model.train()
    train_loss = 0
    for step in range(3):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data, eps)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        out[f"loss{step}"] = loss
    out["train_loss"] = train_loss / len(data)
    out["grads"] = _grads(model)
    out["adam_state"] = optimizer.state_dict()["state"][0]
    with torch.no_grad():
        sample = model.decode(torch.from_numpy(_data(63, 8, 4)))
        out["sample"] = sample.view(8, 1, 8, 8)
        recon, mu, logvar = model(data)
        out["mu"] = mu
        out["random_recon_shape"] = str(recon.shape)
        out["requires_grad"] = [recon.requires_grad, recon.grad_fn is None]
    r = model(data, eps)[0]
    out["bce_range"] = _error(lambda: F.binary_cross_entropy(r, data.view(-1, 64) * 2, reduction='sum'))
    out["bce_size"] = _error(lambda: F.binary_cross_entropy(r, data))
    out["bce_logits"] = F.binary_cross_entropy_with_logits(model.fc4.weight, torch.ones_like(model.fc4.weight),
                                                           pos_weight=torch.full((32,), 2.0))
    out["kl_div"] = F.kl_div(F.log_softmax(mu, -1), F.softmax(logvar, -1), reduction="batchmean")
    out["mse"] = nn.MSELoss(reduction="none")(r, data.view(16, 64))[:2]
    return out


def test_vae():
    _run(vae, rtol=2e-4, atol=2e-5)


# ---------------------------------------------------------------- DCGAN

def dcgan(torch):
    nn = torch.nn
    out = {}
    nz, ngf, ndf, nc = 8, 4, 4, 3

    def weights_init(m):
        classname = m.__class__.__name__
        if classname.find('Conv') != -1:
            nn.init.normal_(m.weight.data, 0.0, 0.02)
        elif classname.find('BatchNorm') != -1:
            nn.init.normal_(m.weight.data, 1.0, 0.02)
            nn.init.constant_(m.bias.data, 0)

    class Generator(nn.Module):
        def __init__(self, ngpu):
            super(Generator, self).__init__()
            self.ngpu = ngpu
            self.main = nn.Sequential(
                nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False), nn.BatchNorm2d(ngf * 4), nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ngf * 2), nn.ReLU(True),
                nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False), nn.Tanh())

        def forward(self, input):
            return self.main(input)

    class Discriminator(nn.Module):
        def __init__(self, ngpu):
            super(Discriminator, self).__init__()
            self.ngpu = ngpu
            self.main = nn.Sequential(
                nn.Conv2d(nc, ndf, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(ndf * 2),
                nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False))

        def forward(self, input):
            return self.main(input)

    netG = Generator(1)
    netG.apply(weights_init)
    w = netG.main[0].weight
    out["init_stats"] = [abs(w.mean().item()) < 0.005, abs(w.std().item() - 0.02) < 0.003,
                         torch.equal(netG.main[1].bias, torch.zeros(ngf * 4))]
    netD = Discriminator(1)
    netD.apply(weights_init)
    out["G"], out["D"] = str(netG), str(netD)
    out["keys"] = [_set_weights(torch, netG, 70, scale=0.2), _set_weights(torch, netD, 80, scale=0.2)]
    criterion = nn.BCEWithLogitsLoss()
    fixed_noise = torch.from_numpy(_data(71, 4, nz, 1, 1))
    real_label, fake_label = 1., 0.
    optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    real = torch.from_numpy(np.tanh(_data(72, 4, nc, 16, 16)))
    G_losses, D_losses = [], []
    for i in range(2):
        netD.zero_grad()
        b_size = real.size(0)
        label = torch.full((b_size,), real_label, dtype=torch.float)
        output = netD(real).view(-1)
        errD_real = criterion(output, label)
        errD_real.backward()
        D_x = output.mean().item()
        noise = fixed_noise + i
        fake = netG(noise)
        label.fill_(fake_label)
        output = netD(fake.detach()).view(-1)
        errD_fake = criterion(output, label)
        errD_fake.backward()
        D_G_z1 = output.mean().item()
        errD = errD_real + errD_fake
        optimizerD.step()
        out[f"D_grads{i}"] = _grads(netD)
        netG.zero_grad()
        label.fill_(real_label)
        output = netD(fake).view(-1)
        errG = criterion(output, label)
        errG.backward()
        D_G_z2 = output.mean().item()
        optimizerG.step()
        out[f"G_grads{i}"] = _grads(netG)
        G_losses.append(errG.item())
        D_losses.append(errD.item())
        out[f"stats{i}"] = '[%d/%d]\tLoss_D: %.4f\tLoss_G: %.4f\tD(x): %.4f\tD(G(z)): %.4f / %.4f' % (
            i, 2, errD.item(), errG.item(), D_x, D_G_z1, D_G_z2)
    with torch.no_grad():
        fake = netG(fixed_noise).detach().cpu()
    out["fake"] = fake
    out["losses"] = [G_losses, D_losses]
    out["state"] = netG.state_dict()
    ct = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
    out["ct_shape"] = str(ct(torch.ones(1, 2, 5, 5)).shape)
    out["ct_output_size"] = str(ct(torch.ones(1, 2, 5, 5), output_size=[9, 9]).shape)
    out["ct_bad_output_size"] = _error(lambda: ct(torch.ones(1, 2, 5, 5), output_size=[20, 20]))
    out["ct_repr"] = repr(ct)
    return out


def test_dcgan():
    _run(dcgan, rtol=2e-4, atol=2e-5)


# ---------------------------------------------------------------- seq2seq GRU with attention

def seq2seq(torch):
    nn, F = torch.nn, torch.nn.functional
    out = {}
    SOS_token, MAX_LENGTH, hidden_size, in_vocab, out_vocab = 0, 6, 8, 11, 9

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super(EncoderRNN, self).__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super(BahdanauAttention, self).__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super(AttnDecoderRNN, self).__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs = []
            attentions = []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)  # Teacher forcing
                else:
                    _, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = torch.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights

    encoder = EncoderRNN(in_vocab, hidden_size)
    decoder = AttnDecoderRNN(hidden_size, out_vocab)
    out["repr"] = [repr(encoder), repr(decoder)]
    out["keys"] = [_set_weights(torch, encoder, 90), _set_weights(torch, decoder, 100)]
    rng = np.random.default_rng(91)
    input_tensor = torch.from_numpy(rng.integers(1, in_vocab, (3, MAX_LENGTH)))
    target_tensor = torch.from_numpy(rng.integers(1, out_vocab, (3, MAX_LENGTH)))
    encoder_optimizer = torch.optim.Adam(encoder.parameters(), lr=0.01)
    decoder_optimizer = torch.optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    encoder.dropout.p = decoder.dropout.p = 0.0
    for epoch in range(2):
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
        loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)), target_tensor.view(-1))
        loss.backward()
        out[f"loss{epoch}"] = loss
        out[f"enc_grads{epoch}"] = _grads(encoder)
        out[f"dec_grads{epoch}"] = _grads(decoder)
        encoder_optimizer.step()
        decoder_optimizer.step()
    encoder.eval()
    decoder.eval()
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(input_tensor)
        decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs, encoder_hidden)
        _, topi = decoder_outputs.topk(1)
        decoded_ids = topi.squeeze()
    out["eval"] = [decoder_outputs, decoder_hidden, decoder_attn, decoded_ids]
    out["decoded"] = [[idx.item() for idx in row] for row in decoded_ids]
    out["gru_bad"] = _error(lambda: encoder.gru(torch.ones(3, 4, 5)))
    out["gru_bad_h"] = _error(lambda: encoder.gru(torch.ones(3, 4, 8), torch.ones(1, 2, 8)))
    out["emb_oob"] = _error(lambda: encoder.embedding(torch.tensor([[in_vocab]])))
    out["emb_float"] = _error(lambda: encoder.embedding(torch.tensor([[1.0]])))
    out["nll_bad"] = _error(lambda: criterion(torch.ones(3, 4), torch.tensor([0, 1])))
    out["nll_oob"] = _error(lambda: criterion(torch.ones(2, 4), torch.tensor([0, 4])))
    return out


def test_seq2seq():
    _run(seq2seq, rtol=2e-4, atol=2e-5)


# ---------------------------------------------------------------- char-RNN name classifier

def char_rnn(torch):
    nn = torch.nn
    out = {}
    import string
    all_letters = string.ascii_letters + " .,;'"
    n_letters = len(all_letters)

    def letterToIndex(letter):
        return all_letters.find(letter)

    def lineToTensor(line):
        tensor = torch.zeros(len(line), 1, n_letters)
        for li, letter in enumerate(line):
            tensor[li][0][letterToIndex(letter)] = 1
        return tensor

    out["J"] = lineToTensor("J")
    out["Jones_size"] = str(lineToTensor("Jones").size())

    class CharRNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(CharRNN, self).__init__()
            self.rnn = nn.RNN(input_size, hidden_size)
            self.h2o = nn.Linear(hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, line_tensor):
            rnn_out, hidden = self.rnn(line_tensor)
            output = self.h2o(hidden[0])
            output = self.softmax(output)
            return output

    all_categories = ["English", "French", "Greek", "Italian"]
    rnn = CharRNN(n_letters, 16, len(all_categories))
    out["repr"] = repr(rnn)
    out["keys"] = _set_weights(torch, rnn, 110)

    def categoryFromOutput(output):
        top_n, top_i = output.topk(1)
        category_i = top_i[0].item()
        return all_categories[category_i], category_i

    output = rnn(lineToTensor("Albert"))
    out["output"] = output
    out["category"] = categoryFromOutput(output)
    criterion = nn.NLLLoss()
    optimizer = torch.optim.SGD(rnn.parameters(), lr=0.05)
    names = [("Smith", 0), ("Dubois", 1), ("Papadopoulos", 2), ("Rossi", 3)]
    rnn.train()
    for epoch in range(2):
        batch_loss = 0
        for name, cat in names:
            output = rnn(lineToTensor(name))
            loss = criterion(output, torch.tensor([cat], dtype=torch.long))
            batch_loss += loss
        batch_loss.backward()
        nn.utils.clip_grad_norm_(rnn.parameters(), 3)
        optimizer.step()
        optimizer.zero_grad()
        out[f"loss{epoch}"] = batch_loss.item() / len(names)

    # the classic hand-written cell
    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, output_size):
            super(RNN, self).__init__()
            self.hidden_size = hidden_size
            self.i2h = nn.Linear(input_size + hidden_size, hidden_size)
            self.i2o = nn.Linear(input_size + hidden_size, output_size)
            self.softmax = nn.LogSoftmax(dim=1)

        def forward(self, input, hidden):
            combined = torch.cat((input, hidden), 1)
            hidden = self.i2h(combined)
            output = self.softmax(self.i2o(combined))
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, self.hidden_size)

    cell = RNN(n_letters, 16, 4)
    _set_weights(torch, cell, 120)
    line_tensor = lineToTensor("Bianchi")
    hidden = cell.initHidden()
    cell.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = cell(line_tensor[i], hidden)
    loss = criterion(output, torch.tensor([3]))
    loss.backward()
    for p in cell.parameters():
        p.data.add_(p.grad.data, alpha=-0.005)
    out["cell"] = [output, loss, _grads(cell), cell.state_dict()]
    confusion = torch.zeros(4, 4)
    confusion[1][2] += 1
    confusion[3][3] += 2
    for i in range(4):
        confusion[i] = confusion[i] / (confusion[i].sum() + 1e-9)
    out["confusion"] = confusion
    out["rnn_cell"] = nn.RNNCell(3, 2, nonlinearity="relu")
    out["rnn_nonlin"] = _error(lambda: nn.RNN(3, 2, nonlinearity="sigmoid"))
    out["rnn_input"] = _error(lambda: rnn.rnn(torch.ones(2, 1, 3)))
    out["rnn_dims"] = _error(lambda: rnn.rnn(torch.ones(2, 2, 2, n_letters)))
    return out


def test_char_rnn():
    _run(char_rnn, rtol=2e-4, atol=2e-5)


# ---------------------------------------------------------------- a small Transformer language model

def transformer_lm(torch, batch_first=False):
    nn = torch.nn
    out = {}

    class PositionalEncoding(nn.Module):
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer('pe', pe)

        def forward(self, x):
            if batch_first:
                x = x + self.pe[:x.size(1)].transpose(0, 1)
            else:
                x = x + self.pe[:x.size(0)]
            return self.dropout(x)

    class TransformerModel(nn.Module):
        def __init__(self, ntoken, d_model, nhead, d_hid, nlayers, dropout=0.5):
            super().__init__()
            self.model_type = 'Transformer'
            self.pos_encoder = PositionalEncoding(d_model, dropout, max_len=64)
            encoder_layers = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout, batch_first=batch_first)
            self.transformer_encoder = nn.TransformerEncoder(encoder_layers, nlayers)
            self.embedding = nn.Embedding(ntoken, d_model)
            self.d_model = d_model
            self.linear = nn.Linear(d_model, ntoken)
            self.init_weights()

        def init_weights(self):
            initrange = 0.1
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.linear.bias.data.zero_()
            self.linear.weight.data.uniform_(-initrange, initrange)

        def forward(self, src, src_mask=None, src_key_padding_mask=None):
            src = self.embedding(src) * math.sqrt(self.d_model)
            src = self.pos_encoder(src)
            output = self.transformer_encoder(src, src_mask, src_key_padding_mask=src_key_padding_mask)
            return self.linear(output)

    ntokens, emsize, d_hid, nlayers, nhead = 20, 8, 16, 2, 2
    model = TransformerModel(ntokens, emsize, nhead, d_hid, nlayers, 0.2)
    out["init_range"] = [model.embedding.weight.abs().max().item() <= 0.1, model.linear.bias.sum().item()]
    out["repr"] = repr(model)
    out["keys"] = _set_weights(torch, model, 130)
    out["buffers"] = [(n, str(b.shape)) for n, b in model.named_buffers()]
    out["pe"] = model.pos_encoder.pe[:5]
    out["n_params"] = sum(p.numel() for p in model.parameters())
    out["sizes"] = [(n, str(p.size())) for n, p in model.named_parameters()]
    rng = np.random.default_rng(131)
    seq_len, bsz = 7, 3
    data = torch.from_numpy(rng.integers(0, ntokens, (seq_len + 1, bsz)))
    inp, targets = data[:-1], data[1:].reshape(-1)
    if batch_first:
        inp, targets = inp.t(), data[1:].t().reshape(-1)
    mask = nn.Transformer.generate_square_subsequent_mask(seq_len)
    out["mask"] = mask
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=5.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.95)
    model.train()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.p = 0.0
        if isinstance(m, nn.MultiheadAttention):
            m.dropout = 0.0
    model.pos_encoder.dropout.p = 0.0
    for step in range(2):
        output = model(inp, mask)
        output_flat = output.view(-1, ntokens)
        loss = criterion(output_flat, targets)
        optimizer.zero_grad()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        scheduler.step()
        out[f"train{step}"] = [loss, norm, scheduler.get_last_lr()[0], math.exp(loss.item())]
    out["grads"] = _grads(model)
    model.eval()
    with torch.no_grad():
        pad = torch.zeros(bsz, seq_len, dtype=torch.bool)
        pad[0, -2:] = True
        out["eval_pad"] = model(inp, mask, pad)
        out["eval_causal"] = model(inp, src_mask=mask)
        out["eval_nomask"] = model(inp)
        out["eval_bool_mask"] = model(inp, torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), 1))
    out["mask_bad"] = _error(lambda: model(inp, torch.zeros(seq_len + 1, seq_len + 1)))
    out["mask_dtype"] = _error(lambda: model(inp, mask, torch.zeros(bsz, seq_len)))
    out["layer_sd"] = list(model.transformer_encoder.layers[0].state_dict())
    return out


def test_transformer_lm():
    _run(transformer_lm, rtol=5e-4, atol=5e-5)


def test_transformer_lm_batch_first():
    _run(transformer_lm, rtol=5e-4, atol=5e-5, batch_first=True)


# ---------------------------------------------------------------- EmbeddingBag text classification

def embedding_bag(torch):
    nn = torch.nn
    out = {}
    vocab_size, emsize, num_class = 30, 8, 4

    class TextClassificationModel(nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super(TextClassificationModel, self).__init__()
            self.embedding = nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
            self.fc = nn.Linear(embed_dim, num_class)
            self.init_weights()

        def init_weights(self):
            initrange = 0.5
            self.embedding.weight.data.uniform_(-initrange, initrange)
            self.fc.weight.data.uniform_(-initrange, initrange)
            self.fc.bias.data.zero_()

        def forward(self, text, offsets):
            embedded = self.embedding(text, offsets)
            return self.fc(embedded)

    rng = np.random.default_rng(140)
    batch = [(int(rng.integers(0, num_class)), list(rng.integers(0, vocab_size, int(rng.integers(2, 7)))))
             for _ in range(6)]

    def collate_batch(batch):
        label_list, text_list, offsets = [], [], [0]
        for _label, _text in batch:
            label_list.append(_label)
            processed_text = torch.tensor(_text, dtype=torch.int64)
            text_list.append(processed_text)
            offsets.append(processed_text.size(0))
        label_list = torch.tensor(label_list, dtype=torch.int64)
        offsets = torch.tensor(offsets[:-1]).cumsum(dim=0)
        text_list = torch.cat(text_list)
        return label_list, text_list, offsets

    loader = torch.utils.data.DataLoader(batch, batch_size=3, shuffle=False, collate_fn=collate_batch)
    model = TextClassificationModel(vocab_size, emsize, num_class)
    out["repr"] = repr(model)
    out["keys"] = _set_weights(torch, model, 141)
    criterion = torch.nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1.0, gamma=0.1)
    model.train()
    total_acc, total_count = 0, 0
    for idx, (label, text, offsets) in enumerate(loader):
        out[f"batch{idx}"] = [label, text, offsets]
        optimizer.zero_grad()
        predicted_label = model(text, offsets)
        loss = criterion(predicted_label, label)
        loss.backward()
        out[f"grad{idx}"] = _grads(model)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total_acc += (predicted_label.argmax(1) == label).sum().item()
        total_count += label.size(0)
    scheduler.step()
    out["acc"] = [total_acc, total_count, optimizer.param_groups[0]["lr"]]
    model.eval()
    with torch.no_grad():
        text = torch.tensor([1, 2, 3, 4, 5, 6])
        out["predict"] = model(text, torch.tensor([0]))
        out["predict_2d"] = model.embedding(text.view(2, 3))
        for mode in ("sum", "max"):
            bag = nn.EmbeddingBag.from_pretrained(model.embedding.weight, mode=mode)
            out[f"bag_{mode}"] = bag(text, torch.tensor([0, 2, 2]))
            out[f"bag_{mode}_repr"] = repr(bag)
        bag = nn.EmbeddingBag(vocab_size, emsize, mode="sum", padding_idx=0)
        _set_weights(torch, bag, 142)
        out["bag_pad"] = bag(torch.tensor([0, 1, 0, 2]), torch.tensor([0, 2]),
                             per_sample_weights=torch.tensor([1.0, 2.0, 3.0, 0.5]))
        out["bag_last"] = nn.EmbeddingBag.from_pretrained(model.embedding.weight, include_last_offset=True)(
            text, torch.tensor([0, 2, 6]))
    out["bag_offsets_2d"] = _error(lambda: model(text.view(2, 3), torch.tensor([0])))
    out["bag_psw_mean"] = _error(lambda: model.embedding(text, torch.tensor([0]), per_sample_weights=text.float()))
    out["bag_offsets_first"] = _error(lambda: model(text, torch.tensor([1, 3])))
    return out


def test_embedding_bag():
    _run(embedding_bag)


# ---------------------------------------------------------------- spatial transformer network

def spatial_transformer(torch):
    nn, F = torch.nn, torch.nn.functional
    out = {}

    class Net(nn.Module):
        def __init__(self):
            super(Net, self).__init__()
            self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
            self.conv2 = nn.Conv2d(4, 8, kernel_size=5)
            self.conv2_drop = nn.Dropout2d()
            self.fc1 = nn.Linear(8 * 4 * 4, 16)
            self.fc2 = nn.Linear(16, 10)
            self.localization = nn.Sequential(
                nn.Conv2d(1, 4, kernel_size=7), nn.MaxPool2d(2, stride=2), nn.ReLU(True),
                nn.Conv2d(4, 6, kernel_size=5), nn.MaxPool2d(2, stride=2), nn.ReLU(True))
            self.fc_loc = nn.Sequential(nn.Linear(6 * 3 * 3, 32), nn.ReLU(True), nn.Linear(32, 3 * 2))
            self.fc_loc[2].weight.data.zero_()
            self.fc_loc[2].bias.data.copy_(torch.tensor([1, 0, 0, 0, 1, 0], dtype=torch.float))

        def stn(self, x):
            xs = self.localization(x)
            xs = xs.view(-1, 6 * 3 * 3)
            theta = self.fc_loc(xs)
            theta = theta.view(-1, 2, 3)
            grid = F.affine_grid(theta, x.size())
            x = F.grid_sample(x, grid)
            return x

        def forward(self, x):
            x = self.stn(x)
            x = F.relu(F.max_pool2d(self.conv1(x), 2))
            x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
            x = x.view(-1, 8 * 4 * 4)
            x = F.relu(self.fc1(x))
            x = F.dropout(x, training=self.training)
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    model = Net()
    x = torch.from_numpy(_data(150, 2, 1, 28, 28))
    with torch.no_grad():
        out["identity_stn"] = (model.stn(x) - x).abs().max().item() < 1e-5
    out["keys"] = _set_weights(torch, model, 151, scale=0.1)
    # in float32 one-ulp differences of affine_grid's batched matmul move samples across pixel borders
    model.double()
    x = x.double()
    model.eval()
    out["eval"] = model(x)
    out["stn"] = model.stn(x)
    model.train()
    model.conv2_drop.p = 0.0
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    optimizer.zero_grad()
    output = F.log_softmax(model.fc2(F.relu(model.fc1(
        F.relu(F.max_pool2d(model.conv2(F.relu(F.max_pool2d(model.conv1(model.stn(x)), 2))), 2)).view(-1, 128)))),
        dim=1)
    loss = F.nll_loss(output, torch.tensor([3, 7]))
    loss.backward()
    out["loss"] = loss
    out["grads"] = _grads(model)
    theta = torch.tensor([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.0]]], dtype=torch.float64, requires_grad=True)
    img = torch.from_numpy(_data(152, 1, 2, 5, 6).astype(np.float64)).requires_grad_()
    for align in (True, False):
        for mode in ("bilinear", "nearest"):
            for pad in ("zeros", "border", "reflection"):
                grid = F.affine_grid(theta, (1, 2, 4, 3), align_corners=align)
                y = F.grid_sample(img, grid, mode=mode, padding_mode=pad, align_corners=align)
                g = torch.autograd.grad(y.sin().sum(), (img, theta) if mode == "bilinear" else (img,))
                out[f"gs_{align}_{mode}_{pad}"] = [y, list(g)]
    out["ag_bad"] = _error(lambda: F.affine_grid(theta[0], (1, 2, 4, 3)))
    out["ag_size"] = _error(lambda: F.affine_grid(theta, (2, 2, 4, 3)))
    out["gs_mode"] = _error(lambda: F.grid_sample(img, grid, mode="cubic"))
    return out


def test_spatial_transformer():
    _run(spatial_transformer, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------- module API: hooks, apply, init, counting, errors

def module_api(torch):
    nn = torch.nn
    out = {}
    calls = []

    class Block(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.conv = nn.Conv2d(c, c, 3, padding=1, bias=False)
            self.bn = nn.BatchNorm2d(c)
            self.act = nn.ReLU()

        def forward(self, x):
            return self.act(self.bn(self.conv(x))) + x

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(3, 4, 3, stride=2)
            self.blocks = nn.ModuleList([Block(4) for _ in range(2)])
            self.heads = nn.ModuleDict({"cls": nn.Linear(4, 3), "reg": nn.Linear(4, 1)})
            self.scale = nn.Parameter(torch.ones(1))
            self.extra = nn.ParameterList([nn.Parameter(torch.zeros(2)), nn.Parameter(torch.ones(3))])
            self.register_buffer("steps", torch.tensor(0))
            self.pool = nn.AdaptiveAvgPool2d((1, 1))

        def forward(self, x):
            x = self.stem(x)
            for b in self.blocks:
                x = b(x)
            x = self.pool(x).flatten(1) * self.scale
            return self.heads["cls"](x), self.heads["reg"](x).squeeze(-1)

    net = Net()
    out["repr"] = repr(net)
    out["keys"] = _set_weights(torch, net, 160)
    out["named_parameters"] = [(n, tuple(p.shape)) for n, p in net.named_parameters()]
    out["named_modules"] = [n for n, _ in net.named_modules()]
    out["named_children"] = [n for n, _ in net.named_children()]
    out["named_buffers"] = [n for n, _ in net.named_buffers()]
    out["n_params"] = sum(p.numel() for p in net.parameters())
    out["n_trainable"] = sum(p.numel() for p in net.parameters() if p.requires_grad)
    out["n_unique"] = sum({p.data_ptr(): p.numel() for p in net.parameters()}.values())

    def init_weights(m):
        calls.append(type(m).__name__)
        if isinstance(m, nn.Linear):
            torch.nn.init.xavier_uniform_(m.weight)
            m.bias.data.fill_(0.01)

    net2 = Net()
    net2.apply(init_weights)
    out["apply_order"] = list(calls)
    w = net2.heads["cls"].weight
    bound = math.sqrt(6 / (4 + 3))
    out["xavier"] = [w.abs().max().item() <= bound, net2.heads["cls"].bias.tolist()]

    record = []

    def pre_hook(module, args):
        record.append(("pre", type(module).__name__, [tuple(a.shape) for a in args]))

    def fwd_hook(module, args, output):
        record.append(("fwd", type(module).__name__, tuple(output.shape)))

    def bwd_hook(module, grad_input, grad_output):
        record.append(("bwd", type(module).__name__, [None if g is None else tuple(g.shape) for g in grad_input],
                       [tuple(g.shape) for g in grad_output]))

    features = {}

    def get_activation(name):
        def hook(model, input, output):
            features[name] = output.detach()
        return hook

    h1 = net.stem.register_forward_pre_hook(pre_hook)
    h2 = net.blocks[0].register_forward_hook(fwd_hook)
    h3 = net.heads["cls"].register_full_backward_hook(bwd_hook)
    h4 = net.blocks[1].bn.register_forward_hook(get_activation("bn"))
    x = torch.from_numpy(_data(161, 2, 3, 9, 9)).requires_grad_()
    cls, reg = net(x)
    (cls.sum() + reg.sum()).backward()
    out["record"] = record
    out["features"] = features["bn"]
    out["outputs"] = [cls, reg]
    out["grads"] = _grads(net)
    out["x_grad"] = x.grad
    out["hook_types"] = type(h1).__name__
    for h in (h1, h2, h3, h4):
        h.remove()
    record.clear()
    net(x)
    out["after_remove"] = list(record)

    tensor_grads = []
    y = net.stem.weight * 2
    y.register_hook(lambda g: tensor_grads.append(g.sum()))
    net.stem.weight.register_hook(lambda g: g * 0.5)
    net.zero_grad()
    y.sum().backward()
    out["tensor_hooks"] = [tensor_grads, net.stem.weight.grad]
    net.zero_grad(set_to_none=False)
    out["zero_grad_false"] = net.stem.weight.grad.abs().sum()
    net.zero_grad()
    out["zero_grad_none"] = net.stem.weight.grad is None

    # freezing, train/eval, requires_grad_
    for p in net.stem.parameters():
        p.requires_grad = False
    out["frozen_count"] = sum(p.numel() for p in net.parameters() if p.requires_grad)
    net.requires_grad_(True)
    out["eval_flags"] = [m.training for m in net.eval().modules()][:4]
    out["train_flags"] = [m.training for m in net.train().modules()][:4]

    # state_dict round trips and load errors
    sd = net.state_dict()
    out["sd_types"] = [type(v).__name__ for v in sd.values()][:3]
    out["sd_requires_grad"] = [v.requires_grad for v in sd.values()][:3]
    bad = dict(sd)
    del bad["scale"]
    bad["unexpected.weight"] = torch.zeros(1)
    out["load_strict"] = _error(lambda: net.load_state_dict(bad))
    out["load_nonstrict"] = str(net.load_state_dict(bad, strict=False))
    bad2 = dict(sd)
    bad2["stem.weight"] = torch.zeros(5, 3, 3, 3)
    out["load_shape"] = _error(lambda: net.load_state_dict(bad2))
    out["missing_attr"] = _error(lambda: net.foo)
    out["bad_module"] = _error(lambda: net.add_module("x.y", nn.ReLU()))
    out["bad_param"] = _error(lambda: net.register_parameter("p", torch.ones(2)))
    out["bad_assign"] = _error(lambda: setattr(net, "scale", torch.ones(1)))
    out["get_submodule"] = type(net.get_submodule("blocks.1.bn")).__name__
    out["get_submodule_bad"] = _error(lambda: net.get_submodule("blocks.5"))
    out["get_parameter"] = tuple(net.get_parameter("heads.cls.weight").shape)
    # a second state_dict copy is independent of later in-place updates
    sd_copy = {k: v.clone() for k, v in net.state_dict().items()}
    with torch.no_grad():
        net.scale.mul_(3)
    out["sd_independent"] = [sd_copy["scale"].item(), net.state_dict()["scale"].item()]
    out["extra_repr"] = [net.stem.extra_repr(), net.blocks[0].bn.extra_repr(), net.pool.extra_repr()]
    out["modules_len"] = [len(net.blocks), len(net.heads), len(list(net.modules()))]
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    out["seq_slice"] = repr(seq[:2])
    out["seq_neg"] = repr(seq[-1])
    seq.append(nn.Sigmoid())
    out["seq_append"] = repr(seq)
    out["seq_index_err"] = _error(lambda: seq[10])
    out["module_list_add"] = repr(nn.ModuleList([nn.ReLU()]) + nn.ModuleList([nn.Tanh()]))
    out["param_repr"] = repr(nn.Parameter(torch.tensor([1.0, 2.0])))
    out["param_list_repr"] = repr(net.extra)
    out["param_dict_repr"] = repr(nn.ParameterDict({"a": nn.Parameter(torch.ones(2, 3))}))
    return out


def test_module_api():
    _run(module_api)


# ---------------------------------------------------------------- init distributions

def init_stats(torch):
    nn = torch.nn
    out = {}
    torch.manual_seed(0)

    def stats(t):
        return [round(t.mean().item(), 2), round(t.std().item(), 2)]

    w = torch.empty(400, 300)
    out["kaiming_uniform"] = stats(nn.init.kaiming_uniform_(w, a=math.sqrt(5)))
    out["kaiming_normal"] = stats(nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"))
    out["xavier_uniform"] = stats(nn.init.xavier_uniform_(w, gain=nn.init.calculate_gain("tanh")))
    out["xavier_normal"] = stats(nn.init.xavier_normal_(w))
    out["normal"] = stats(nn.init.normal_(w, 0.5, 0.02))
    out["trunc_normal"] = [stats(nn.init.trunc_normal_(w, std=0.02)), w.abs().max().item() <= 2.0]
    out["uniform"] = [w.min().item() >= -0.1 for _ in [nn.init.uniform_(w, -0.1, 0.1)]]
    q = nn.init.orthogonal_(torch.empty(30, 50))
    out["orthogonal"] = (q @ q.t() - torch.eye(30)).abs().max().item() < 1e-4
    out["eye"] = nn.init.eye_(torch.empty(2, 3))
    out["dirac"] = nn.init.dirac_(torch.empty(2, 2, 3)).sum().item()
    out["zeros_ones"] = [nn.init.zeros_(torch.empty(2)).tolist(), nn.init.ones_(torch.empty(2)).tolist(),
                         nn.init.constant_(torch.empty(2), 0.3).tolist()]
    out["gains"] = [nn.init.calculate_gain(n) for n in ("linear", "conv2d", "sigmoid", "tanh", "relu", "selu")] + [
        nn.init.calculate_gain("leaky_relu", 0.2)]
    out["gain_bad"] = _error(lambda: nn.init.calculate_gain("foo"))
    out["fan_bad"] = _error(lambda: nn.init.xavier_uniform_(torch.empty(3)))
    out["sparse"] = (nn.init.sparse_(torch.empty(10, 4), 0.3) == 0).sum(0).tolist()
    lin = nn.Linear(300, 200)
    bound = 1 / math.sqrt(300)
    out["linear_default"] = [lin.weight.abs().max().item() <= bound, lin.bias.abs().max().item() <= bound,
                             abs(lin.weight.std().item() - bound / math.sqrt(3)) < 0.002]
    conv = nn.Conv2d(16, 32, 3)
    bound = 1 / math.sqrt(16 * 9)
    out["conv_default"] = [conv.weight.abs().max().item() <= bound, abs(conv.weight.std().item() -
                                                                        bound / math.sqrt(3)) < 0.002]
    emb = nn.Embedding(1000, 50, padding_idx=0)
    out["embedding_default"] = [stats(emb.weight[1:]), emb.weight[0].abs().sum().item()]
    rnn = nn.LSTM(20, 30)
    out["lstm_default"] = all(p.abs().max().item() <= 1 / math.sqrt(30) for p in rnn.parameters())
    ln = nn.LayerNorm(5)
    out["layernorm_default"] = [ln.weight.tolist(), ln.bias.tolist()]
    bn = nn.BatchNorm1d(3)
    out["bn_default"] = [bn.weight.tolist(), bn.bias.tolist(), bn.running_var.tolist(), bn.num_batches_tracked]
    mha = nn.MultiheadAttention(16, 4)
    out["mha_default"] = [mha.in_proj_bias.abs().sum().item(), mha.out_proj.bias.abs().sum().item()]
    with torch.no_grad():
        out["no_grad_init"] = nn.init.normal_(nn.Parameter(torch.empty(3))).requires_grad
    return out


def test_init_stats():
    _run(init_stats)


# ---------------------------------------------------------------- losses and the mistakes people make with them

def losses(torch):
    nn, F = torch.nn, torch.nn.functional
    out = {}
    logits = torch.from_numpy(_data(170, 4, 5)).requires_grad_()
    target = torch.tensor([1, 0, 4, 2])
    probs = torch.from_numpy(np.random.default_rng(171).dirichlet(np.ones(5), 4).astype(np.float32))
    cases = {
        "ce": lambda: nn.CrossEntropyLoss()(logits, target),
        "ce_weight": lambda: nn.CrossEntropyLoss(weight=torch.tensor([1.0, 2.0, 0.5, 1.0, 3.0]))(logits, target),
        "ce_ignore": lambda: F.cross_entropy(logits, torch.tensor([1, -100, 4, -100])),
        "ce_smooth": lambda: F.cross_entropy(logits, target, label_smoothing=0.2),
        "ce_probs": lambda: F.cross_entropy(logits, probs),
        "ce_sum": lambda: F.cross_entropy(logits, target, reduction="sum"),
        "ce_none": lambda: F.cross_entropy(logits, target, reduction="none"),
        "ce_kdim": lambda: F.cross_entropy(logits.t().unsqueeze(0), torch.tensor([[1, 0, 3, 2]])),
        "nll": lambda: F.nll_loss(F.log_softmax(logits, 1), target),
        "bce_logits": lambda: nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0]))(logits[:, 0], target.float() / 4),
        "bce": lambda: nn.BCELoss()(torch.sigmoid(logits), probs),
        "mse": lambda: nn.MSELoss()(logits, probs),
        "l1": lambda: nn.L1Loss(reduction="sum")(logits, probs),
        "smooth_l1": lambda: nn.SmoothL1Loss(beta=0.5)(logits, probs),
        "huber": lambda: nn.HuberLoss(delta=0.3)(logits, probs),
        "kl": lambda: nn.KLDivLoss(reduction="batchmean")(F.log_softmax(logits, 1), probs),
        "kl_mean": lambda: nn.KLDivLoss()(F.log_softmax(logits, 1), probs),
        "kl_log_target": lambda: F.kl_div(F.log_softmax(logits, 1), probs.log(), reduction="sum", log_target=True),
        "margin": lambda: nn.MultiMarginLoss()(logits, target),
        "multilabel_soft": lambda: nn.MultiLabelSoftMarginLoss()(logits, (probs > 0.2).float()),
        "cosine_emb": lambda: nn.CosineEmbeddingLoss(margin=0.1)(logits, probs, torch.tensor([1, -1, 1, -1])),
        "triplet": lambda: nn.TripletMarginLoss(margin=1.0)(logits, probs, logits.flip(0)),
        "hinge_emb": lambda: nn.HingeEmbeddingLoss()(logits, torch.ones(4, 5) - 2 * (probs > 0.3).float()),
        "poisson": lambda: nn.PoissonNLLLoss()(logits, probs),
        "gaussian": lambda: nn.GaussianNLLLoss()(logits, probs, torch.ones(4, 5) * 0.5),
        "soft_margin": lambda: nn.SoftMarginLoss()(logits, torch.ones(4, 5)),
        "margin_ranking": lambda: nn.MarginRankingLoss(0.1)(logits[:, 0], logits[:, 1], torch.tensor([1, -1, 1, 1])),
    }
    for name, fn in cases.items():
        logits.grad = None
        try:
            loss = fn()
        except Exception as e:  # noqa: BLE001
            out[name] = f"{type(e).__name__}: {e}"
            continue
        loss.sum().backward()
        out[name] = [loss, logits.grad, loss.grad_fn.name()]
    # the mistakes
    out["ce_float_target"] = _error(lambda: F.cross_entropy(logits, target.float()))
    out["ce_bad_target_shape"] = _error(lambda: F.cross_entropy(logits, target[:3]))
    out["ce_oob"] = _error(lambda: F.cross_entropy(logits, torch.tensor([1, 0, 5, 2])))
    out["ce_int_input"] = _error(lambda: F.cross_entropy(target.view(2, 2), torch.tensor([0, 1])))
    out["bce_long_target"] = _error(lambda: F.binary_cross_entropy_with_logits(logits, target.view(4, 1).expand(4, 5)))
    out["mse_broadcast"] = _error(lambda: F.mse_loss(logits[:, :1], probs[:, 0]))
    out["mse_long"] = _error(lambda: F.mse_loss(logits, torch.ones(4, 5, dtype=torch.long)))
    out["nll_1d_input"] = _error(lambda: F.nll_loss(logits[0], target))
    out["bad_reduction"] = _error(lambda: F.l1_loss(logits, probs, reduction="avg"))
    out["softmax_implicit"] = F.softmax(logits.detach()[0])
    out["log_softmax_implicit"] = F.log_softmax(logits.detach())
    out["loss_repr"] = [repr(nn.CrossEntropyLoss(label_smoothing=0.1)), repr(nn.BCEWithLogitsLoss()),
                        repr(nn.KLDivLoss(reduction="batchmean")), repr(nn.TripletMarginLoss())]
    out["size_average"] = nn.MSELoss(size_average=False)(logits, probs)
    return out


def test_losses():
    _run(losses)


# ---------------------------------------------------------------- LSTM classifier over padded, packed sequences

def lstm_packed(torch):
    nn = torch.nn
    rnn_utils = torch.nn.utils.rnn
    out = {}

    class LSTMClassifier(nn.Module):
        def __init__(self, vocab, emb, hidden, n_cls):
            super().__init__()
            self.embedding = nn.Embedding(vocab, emb, padding_idx=0)
            self.lstm = nn.LSTM(emb, hidden, num_layers=2, batch_first=True, bidirectional=True, dropout=0.0)
            self.fc = nn.Linear(hidden * 2, n_cls)

        def forward(self, text, lengths):
            embedded = self.embedding(text)
            packed = rnn_utils.pack_padded_sequence(embedded, lengths, batch_first=True, enforce_sorted=False)
            packed_out, (hidden, cell) = self.lstm(packed)
            output, out_lengths = rnn_utils.pad_packed_sequence(packed_out, batch_first=True)
            hidden = torch.cat((hidden[-2, :, :], hidden[-1, :, :]), dim=1)
            return self.fc(hidden), output, out_lengths

    model = LSTMClassifier(15, 6, 5, 3)
    out["repr"] = repr(model)
    out["keys"] = _set_weights(torch, model, 180)
    rng = np.random.default_rng(181)
    seqs = [torch.from_numpy(rng.integers(1, 15, n)) for n in (4, 7, 2, 5)]
    padded = rnn_utils.pad_sequence(seqs, batch_first=True)
    lengths = torch.tensor([len(s) for s in seqs])
    out["padded"] = padded
    logits, output, out_lengths = model(padded, lengths)
    out["forward"] = [logits, output, out_lengths]
    loss = nn.functional.cross_entropy(logits, torch.tensor([0, 2, 1, 2]))
    loss.backward()
    out["loss"] = loss
    out["grads"] = _grads(model)
    out["pad_grad_zero"] = model.embedding.weight.grad[0].abs().sum().item()
    packed = rnn_utils.pack_sequence(seqs, enforce_sorted=False)
    out["packed"] = [packed.data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices]
    out["packed_sorted_err"] = _error(lambda: rnn_utils.pack_sequence(seqs))
    out["packed_lengths_err"] = _error(lambda: rnn_utils.pack_padded_sequence(padded, [4, 7, 2], batch_first=True))
    out["unpack"] = [s.tolist() for s in rnn_utils.unpad_sequence(padded, lengths, batch_first=True)]
    lstm = nn.LSTM(3, 4, proj_size=2)
    out["proj_params"] = [(n, tuple(p.shape)) for n, p in lstm.named_parameters()]
    out["lstm_repr"] = [repr(lstm), repr(nn.GRU(3, 4, 2, bias=False, batch_first=True, bidirectional=True))]
    h0 = (torch.zeros(1, 2, 2), torch.zeros(1, 2, 4))
    out["bad_h0"] = _error(lambda: lstm(torch.ones(5, 2, 3), (h0[1], h0[0])))
    out["flatten"] = model.lstm.flatten_parameters() is None
    out["all_weights"] = [len(w) for w in model.lstm.all_weights]
    cell = nn.LSTMCell(3, 4)
    _set_weights(torch, cell, 182)
    hx, cx = torch.zeros(2, 4), torch.zeros(2, 4)
    xs = torch.from_numpy(_data(183, 5, 2, 3))
    outs = []
    for i in range(5):
        hx, cx = cell(xs[i], (hx, cx))
        outs.append(hx)
    out["cell"] = torch.stack(outs, dim=0)
    return out


def test_lstm_packed():
    _run(lstm_packed)


# ---------------------------------------------------------------- ResNet-style net, weight tying and nn.utils

def resnet_utils(torch):
    nn, F = torch.nn, torch.nn.functional
    out = {}

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes, planes, stride=1, downsample=None):
            super().__init__()
            self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample

        def forward(self, x):
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, num_classes=5, zero_init_residual=True):
            super().__init__()
            self.inplanes = 4
            self.conv1 = nn.Conv2d(3, 4, kernel_size=7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(4, 1)
            self.layer2 = self._make_layer(8, 1, stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(8, num_classes)
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)
            if zero_init_residual:
                for m in self.modules():
                    if isinstance(m, BasicBlock):
                        nn.init.constant_(m.bn2.weight, 0)

        def _make_layer(self, planes, blocks, stride=1):
            downsample = None
            if stride != 1 or self.inplanes != planes:
                downsample = nn.Sequential(nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                                           nn.BatchNorm2d(planes))
            layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes
            for _ in range(1, blocks):
                layers.append(BasicBlock(self.inplanes, planes))
            return nn.Sequential(*layers)

        def forward(self, x):
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer2(self.layer1(x))
            x = torch.flatten(self.avgpool(x), 1)
            return self.fc(x)

    model = ResNet()
    out["zero_init"] = model.layer1[0].bn2.weight.abs().sum().item()
    out["repr"] = repr(model)
    out["keys"] = _set_weights(torch, model, 190)
    x = torch.from_numpy(_data(191, 2, 3, 32, 32))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=10)
    for step in range(2):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), torch.tensor([1, 3]))
        loss.backward()
        out[f"gnorm{step}"] = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0, norm_type=2.0)
        nn.utils.clip_grad_value_(model.parameters(), clip_value=0.05)
        opt.step()
        sched.step()
        out[f"loss{step}"] = loss
    out["state"] = model.state_dict()
    model.eval()
    with torch.no_grad():
        out["eval"] = model(x)
    vec = nn.utils.parameters_to_vector(model.parameters())
    out["vec"] = [vec.shape[0], vec[:5]]
    nn.utils.vector_to_parameters(vec * 0.5, model.parameters())
    out["vec_back"] = model.fc.bias

    # weight tying in a tiny language model
    class TiedLM(nn.Module):
        def __init__(self, ntoken, ninp):
            super().__init__()
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.GRU(ninp, ninp)
            self.decoder = nn.Linear(ninp, ntoken)
            self.decoder.weight = self.encoder.weight

        def forward(self, x, h=None):
            y, h = self.rnn(self.encoder(x), h)
            return self.decoder(y), h

    lm = TiedLM(10, 4)
    out["tied_params"] = [n for n, _ in lm.named_parameters()]
    out["tied_state"] = list(lm.state_dict())
    out["tied_count"] = sum(p.numel() for p in lm.parameters())
    out["tied_same"] = lm.decoder.weight is lm.encoder.weight
    _set_weights(torch, lm, 192)
    out["tied_after_load"] = lm.decoder.weight is lm.encoder.weight
    y, h = lm(torch.tensor([[1, 2], [3, 4], [5, 6]]))
    F.cross_entropy(y.view(-1, 10), torch.tensor([2, 3, 4, 5, 6, 7])).backward()
    out["tied_grad"] = lm.encoder.weight.grad
    h = h.detach()
    out["detached"] = [h.requires_grad, h.grad_fn is None]

    # parametrizations
    lin = nn.Linear(4, 3)
    _set_weights(torch, lin, 193)
    wn = nn.utils.parametrizations.weight_norm(lin)
    out["weight_norm_keys"] = list(wn.state_dict())
    out["weight_norm_out"] = wn(torch.ones(2, 4))
    sn = nn.utils.parametrizations.spectral_norm(nn.Linear(4, 3))
    out["spectral_keys"] = list(sn.state_dict())
    orth = nn.utils.parametrizations.orthogonal(nn.Linear(4, 4))
    w = orth.weight
    out["orthogonal"] = (w @ w.t() - torch.eye(4)).abs().max().item() < 1e-5
    out["parametrized_repr"] = repr(wn)
    nn.utils.parametrize.remove_parametrizations(wn, "weight")
    out["removed_keys"] = list(wn.state_dict())
    return out


def test_resnet_utils():
    _run(resnet_utils)


# ---------------------------------------------------------------- assorted layers, conversions and mistakes

def misc_layers(torch):
    nn, F = torch.nn, torch.nn.functional
    import copy
    import io
    from collections import OrderedDict
    out = {}
    model = nn.Sequential(OrderedDict([
        ("conv", nn.Conv2d(2, 4, 3, padding="same")),
        ("gn", nn.GroupNorm(2, 4)),
        ("act", nn.GELU(approximate="tanh")),
        ("up", nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)),
        ("ps", nn.PixelShuffle(2)),
        ("flat", nn.Flatten(1, 2)),
        ("unflat", nn.Unflatten(1, (1, 12))),
        ("ln", nn.LayerNorm([12, 12], elementwise_affine=True)),
        ("drop", nn.Dropout(0.1)),
        ("id", nn.Identity()),
    ]))
    out["repr"] = repr(model)
    out["keys"] = _set_weights(torch, model, 200)
    model.eval()
    x = torch.from_numpy(_data(201, 2, 2, 3, 3))
    out["forward"] = model(x)
    out["conv_only"] = model.conv(x)
    out["by_name"] = [type(model.gn).__name__, type(model[2]).__name__]
    m64 = copy.deepcopy(model).double()
    out["double"] = [p.dtype for p in m64.parameters()][:2] + [m64(x.double()).dtype]
    out["orig_dtype"] = [p.dtype for p in model.parameters()][:1]
    half = copy.deepcopy(model).to(torch.float16)
    out["half_dtypes"] = [str(p.dtype) for p in half.parameters()][:2]
    out["double_input_mismatch"] = _error(lambda: model(x.double()))
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    buf.seek(0)
    sd = torch.load(buf)
    out["saved"] = sd
    model2 = copy.deepcopy(model)
    out["deepcopy_equal"] = torch.equal(model2(x), model(x))
    out["deepcopy_indep"] = model2.conv.weight.data_ptr() != model.conv.weight.data_ptr()
    del model2.id
    out["after_del"] = [n for n, _ in model2.named_children()]
    out["state_prefix"] = list(model.conv.state_dict(prefix="enc."))
    out["assign"] = str(model.load_state_dict(sd, assign=True))
    out["softmax_implicit"] = nn.Softmax()(x[0, 0])
    out["dropout_p"] = _error(lambda: F.dropout(x, p=1.5))
    out["dropout_mod_p"] = _error(lambda: nn.Dropout(p=-0.1))
    out["same_stride"] = _error(lambda: nn.Conv2d(2, 2, 3, stride=2, padding="same"))
    out["bad_padding_str"] = _error(lambda: nn.Conv2d(2, 2, 3, padding="full"))
    out["ln_shape"] = _error(lambda: nn.LayerNorm(5)(torch.ones(2, 4)))
    out["gn_groups"] = _error(lambda: nn.GroupNorm(2, 5)(torch.ones(2, 5, 3)))
    out["gn_ctor"] = _error(lambda: nn.GroupNorm(3, 5))
    out["conv_groups"] = _error(lambda: nn.Conv2d(4, 6, 3, groups=4))
    out["conv_1d_input"] = _error(lambda: nn.Conv2d(2, 2, 3)(torch.ones(2, 3)))
    out["conv_dtype"] = _error(lambda: nn.Conv2d(2, 2, 3)(torch.ones(1, 2, 5, 5, dtype=torch.float64)))
    out["linear_dtype"] = _error(lambda: nn.Linear(2, 2)(torch.ones(1, 2, dtype=torch.float64)))
    out["linear_int"] = _error(lambda: nn.Linear(2, 2)(torch.ones(1, 2, dtype=torch.long)))
    out["emb_max_norm"] = nn.Embedding(5, 3, max_norm=1.0)(torch.tensor([1, 1, 2])).norm(dim=1) <= 1.0001
    out["buffer_bad"] = _error(lambda: model.register_buffer("b", [1, 2]))
    out["buffer_name"] = _error(lambda: model.register_buffer("a.b", torch.ones(1)))
    out["forward_missing"] = _error(lambda: nn.Module()(x))
    out["upsample_fn"] = F.interpolate(x, scale_factor=1.5, mode="nearest")
    out["upsample_bicubic"] = F.interpolate(x, size=(5, 4), mode="bicubic", align_corners=True)
    out["interp_err"] = _error(lambda: F.interpolate(x, size=(5, 4), scale_factor=2))
    out["adaptive_max"] = nn.AdaptiveMaxPool2d((2, 2), return_indices=True)(x)
    out["pad"] = [F.pad(x, (1, 2, 2, 1), mode=m) for m in ("constant", "reflect", "replicate", "circular")]
    out["pad_err"] = _error(lambda: F.pad(x, (3, 3, 0, 0), mode="reflect"))
    out["pad_size_err"] = _error(lambda: F.pad(x, (1, 2), mode="reflect"))
    out["unfold"] = nn.Unfold(kernel_size=2, stride=1)(x)
    out["fold"] = nn.Fold(output_size=(3, 3), kernel_size=2)(out["unfold"])
    out["cos"] = nn.CosineSimilarity(dim=1)(x[:, 0], x[:, 1])
    out["pdist"] = nn.PairwiseDistance()(x[:, 0, 0], x[:, 1, 0])
    out["one_hot"] = F.one_hot(torch.tensor([0, 2, 1]), num_classes=4)
    out["one_hot_err"] = _error(lambda: F.one_hot(torch.tensor([0, 5]), num_classes=4))
    out["normalize"] = F.normalize(x, dim=1)
    out["glu"] = F.glu(x, dim=1)
    out["prelu"] = nn.PReLU(2)(x)
    out["act_reprs"] = [repr(m) for m in (nn.LeakyReLU(0.1), nn.ELU(alpha=0.5, inplace=True), nn.Hardtanh(-2, 2),
                                          nn.Softplus(beta=2), nn.Threshold(0.1, 20), nn.SiLU(), nn.Mish(),
                                          nn.PReLU(), nn.Softmax(dim=-1), nn.GELU(), nn.ReLU6(inplace=True),
                                          nn.CELU(), nn.Hardswish(), nn.Softmin(1), nn.LogSigmoid())]
    return out


def test_misc_layers():
    _run(misc_layers)


# ---------------------------------------------------------------- nn.Transformer translation model

def translation(torch):
    nn = torch.nn
    out = {}
    PAD_IDX, BOS_IDX = 1, 2

    class PositionalEncoding(nn.Module):
        def __init__(self, emb_size, dropout, maxlen=50):
            super(PositionalEncoding, self).__init__()
            den = torch.exp(- torch.arange(0, emb_size, 2) * math.log(10000) / emb_size)
            pos = torch.arange(0, maxlen).reshape(maxlen, 1)
            pos_embedding = torch.zeros((maxlen, emb_size))
            pos_embedding[:, 0::2] = torch.sin(pos * den)
            pos_embedding[:, 1::2] = torch.cos(pos * den)
            pos_embedding = pos_embedding.unsqueeze(-2)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer('pos_embedding', pos_embedding)

        def forward(self, token_embedding):
            return self.dropout(token_embedding + self.pos_embedding[:token_embedding.size(0), :])

    class TokenEmbedding(nn.Module):
        def __init__(self, vocab_size, emb_size):
            super(TokenEmbedding, self).__init__()
            self.embedding = nn.Embedding(vocab_size, emb_size)
            self.emb_size = emb_size

        def forward(self, tokens):
            return self.embedding(tokens.long()) * math.sqrt(self.emb_size)

    class Seq2SeqTransformer(nn.Module):
        def __init__(self, num_encoder_layers, num_decoder_layers, emb_size, nhead, src_vocab_size,
                     tgt_vocab_size, dim_feedforward=512, dropout=0.1):
            super(Seq2SeqTransformer, self).__init__()
            self.transformer = nn.Transformer(d_model=emb_size, nhead=nhead, num_encoder_layers=num_encoder_layers,
                                              num_decoder_layers=num_decoder_layers,
                                              dim_feedforward=dim_feedforward, dropout=dropout)
            self.generator = nn.Linear(emb_size, tgt_vocab_size)
            self.src_tok_emb = TokenEmbedding(src_vocab_size, emb_size)
            self.tgt_tok_emb = TokenEmbedding(tgt_vocab_size, emb_size)
            self.positional_encoding = PositionalEncoding(emb_size, dropout=dropout)

        def forward(self, src, trg, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask,
                    memory_key_padding_mask):
            src_emb = self.positional_encoding(self.src_tok_emb(src))
            tgt_emb = self.positional_encoding(self.tgt_tok_emb(trg))
            outs = self.transformer(src_emb, tgt_emb, src_mask, tgt_mask, None,
                                    src_padding_mask, tgt_padding_mask, memory_key_padding_mask)
            return self.generator(outs)

        def encode(self, src, src_mask):
            return self.transformer.encoder(self.positional_encoding(self.src_tok_emb(src)), src_mask)

        def decode(self, tgt, memory, tgt_mask):
            return self.transformer.decoder(self.positional_encoding(self.tgt_tok_emb(tgt)), memory, tgt_mask)

    def generate_square_subsequent_mask(sz):
        mask = (torch.triu(torch.ones((sz, sz))) == 1).transpose(0, 1)
        mask = mask.float().masked_fill(mask == 0, float('-inf')).masked_fill(mask == 1, float(0.0))
        return mask

    def create_mask(src, tgt):
        src_seq_len = src.shape[0]
        tgt_seq_len = tgt.shape[0]
        tgt_mask = generate_square_subsequent_mask(tgt_seq_len)
        src_mask = torch.zeros((src_seq_len, src_seq_len)).type(torch.bool)
        src_padding_mask = (src == PAD_IDX).transpose(0, 1)
        tgt_padding_mask = (tgt == PAD_IDX).transpose(0, 1)
        return src_mask, tgt_mask, src_padding_mask, tgt_padding_mask

    model = Seq2SeqTransformer(1, 1, 8, 2, 12, 10, dim_feedforward=16, dropout=0.0)
    for p in model.parameters():
        if p.dim() > 1:
            nn.init.xavier_uniform_(p)
    out["repr"] = repr(model)
    out["keys"] = _set_weights(torch, model, 210)
    src = torch.tensor([[2, 2, 2], [5, 7, 4], [6, 9, 3], [3, 1, 1]])
    tgt = torch.tensor([[2, 2, 2], [4, 5, 8], [3, 3, 1]])
    tgt_input = tgt[:-1, :]
    src_mask, tgt_mask, src_padding_mask, tgt_padding_mask = create_mask(src, tgt_input)
    out["masks"] = [src_mask, tgt_mask, src_padding_mask, tgt_padding_mask]
    with warnings.catch_warnings():
        # torch also warns from inside MultiheadAttention about the mixed mask types (see the report)
        warnings.filterwarnings("ignore", message="Support for mismatched key_padding_mask")
        logits = model(src, tgt_input, src_mask, tgt_mask, src_padding_mask, tgt_padding_mask, src_padding_mask)
        loss_fn = torch.nn.CrossEntropyLoss(ignore_index=PAD_IDX)
        tgt_out = tgt[1:, :]
        loss = loss_fn(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1))
        loss.backward()
    out["logits"] = logits
    out["loss"] = loss
    out["grads"] = _grads(model)
    model.eval()
    src1 = src[:, :1]
    num_tokens = src1.shape[0]
    memory = model.encode(src1, torch.zeros(num_tokens, num_tokens).type(torch.bool))
    ys = torch.ones(1, 1).fill_(BOS_IDX).type(torch.long)
    for i in range(4):
        tgt_mask = (generate_square_subsequent_mask(ys.size(0)).type(torch.bool))
        o = model.decode(ys, memory, tgt_mask)
        o = o.transpose(0, 1)
        prob = model.generator(o[:, -1])
        _, next_word = torch.max(prob, dim=1)
        next_word = next_word.item()
        ys = torch.cat([ys, torch.ones(1, 1).type_as(src1.data).fill_(next_word)], dim=0)
    out["greedy"] = ys.flatten().tolist()
    out["memory"] = memory
    out["tr_mask"] = nn.Transformer.generate_square_subsequent_mask(3)
    return out


def test_translation():
    _run(translation)


# ---------------------------------------------------------------- lazy modules, wrappers and advanced hooks

def hooks_wrappers(torch):
    nn = torch.nn
    out = {}
    lazy = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2))
    out["lazy_repr_before"] = repr(lazy)
    out["lazy_uninit"] = _error(lambda: lazy[0].weight.shape)
    x = torch.from_numpy(_data(220, 3, 5))
    lazy(x)
    out["lazy_repr_after"] = repr(lazy)
    out["lazy_shapes"] = [tuple(p.shape) for p in lazy.parameters()]
    out["lazy_types"] = [type(m).__name__ for m in lazy]
    _set_weights(torch, lazy, 221)
    out["lazy_forward"] = lazy(x)
    lconv = nn.LazyConv2d(3, 2)
    lconv(torch.ones(1, 4, 5, 5))
    out["lazy_conv"] = [repr(lconv), tuple(lconv.weight.shape)]
    lbn = nn.LazyBatchNorm1d()
    lbn(torch.ones(4, 6))
    out["lazy_bn"] = [repr(lbn), tuple(lbn.running_mean.shape)]

    model = nn.Sequential(nn.Linear(5, 4), nn.Tanh(), nn.Linear(4, 2))
    _set_weights(torch, model, 222)
    dp = nn.DataParallel(model)
    out["dp_keys"] = list(dp.state_dict())
    out["dp_forward"] = dp(x)
    out["dp_module"] = dp.module is model
    out["dp_repr"] = repr(dp)

    log = []
    h = model[0].register_forward_hook(lambda m, args, kwargs, o: log.append(("kw", sorted(kwargs))),
                                       with_kwargs=True)
    model(x)
    h.remove()
    h = model[0].register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    out["pre_hook_modifies"] = model(x)
    h.remove()
    h = model[2].register_forward_hook(lambda m, args, o: o * 0 + 1)
    out["hook_replaces"] = model(x)
    h.remove()
    h = model[0].register_full_backward_pre_hook(lambda m, go: (go[0] * 0,))
    xr = x.clone().requires_grad_()
    model(xr).sum().backward()
    out["bwd_pre_hook"] = xr.grad
    h.remove()
    model.zero_grad()
    grads_in = []
    h = model[1].register_full_backward_hook(lambda m, gi, go: grads_in.append((gi[0], go[0])))
    xr = x.clone().requires_grad_()
    model(xr).pow(2).sum().backward()
    out["bwd_hook"] = grads_in
    h.remove()
    h = nn.modules.module.register_module_forward_hook(lambda m, i, o: log.append(type(m).__name__))
    model(x)
    h.remove()
    model(x)
    out["log"] = log
    sd_log = []
    h = model.register_state_dict_pre_hook(lambda m, prefix, keep_vars: sd_log.append(prefix))
    model.state_dict()
    h.remove()
    out["sd_log"] = sd_log
    h = model.register_load_state_dict_post_hook(lambda m, keys: sd_log.append(
        (sorted(keys.missing_keys), sorted(keys.unexpected_keys))))
    model.load_state_dict(model.state_dict())
    h.remove()
    out["load_log"] = sd_log

    class Remapped(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Linear(2, 2)

        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                                  unexpected_keys, error_msgs):
            old = prefix + "old_proj.weight"
            if old in state_dict:
                state_dict[prefix + "proj.weight"] = state_dict.pop(old)
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                          unexpected_keys, error_msgs)

    r = Remapped()
    res = r.load_state_dict({"old_proj.weight": torch.eye(2), "proj.bias": torch.zeros(2)})
    out["remapped"] = [str(res), r.proj.weight]
    meta = r.state_dict()._metadata
    out["metadata"] = {k: dict(v) for k, v in meta.items()}

    class WithKw(nn.Module):
        def forward(self, x, *, scale=1.0):
            return x * scale

    wk = WithKw()
    seen = []
    wk.register_forward_pre_hook(lambda m, a, k: seen.append(dict(k)) or (a, {"scale": 3.0}), with_kwargs=True)
    out["kw_pre_hook"] = [wk(torch.ones(2), scale=2.0), seen]
    return out


def test_hooks_wrappers():
    _run(hooks_wrappers)


# ---------------------------------------------------------------- distributed-style model preparation in one process

def ddp_style_prep(torch):
    nn = torch.nn
    out = {}
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    model(torch.ones(1, 3, 5, 5))
    model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    out["repr"] = repr(model)
    out["keys"] = _set_weights(torch, model, 230)
    x = torch.from_numpy(_data(231, 4, 3, 5, 5))
    y = model(x)
    y.sum().backward()
    out["train"] = [y, model[1].running_mean, model[1].running_var, _grads(model)]
    model.eval()
    out["eval"] = model(x)
    dp = nn.DataParallel(model)
    ckpt = {k.replace("module.", "", 1): v for k, v in dp.state_dict().items()}
    out["ckpt"] = list(ckpt)
    fresh = nn.Sequential(nn.Conv2d(3, 4, 3), nn.SyncBatchNorm(4), nn.ReLU(), nn.Flatten(), nn.Linear(36, 2))
    out["load"] = str(fresh.load_state_dict(ckpt))
    out["loss2d"] = nn.NLLLoss2d()(torch.log_softmax(x, 1), torch.zeros(4, 5, 5, dtype=torch.long))
    out["uninit"] = [nn.UninitializedParameter.__name__, nn.UninitializedBuffer.__name__]
    return out


def test_ddp_style_prep():
    _run(ddp_style_prep)
