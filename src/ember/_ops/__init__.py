"""Every tensor op. Each module defines Op records and binds functions, Tensor methods, in-place variants and
operators from them."""
