#!/usr/bin/python3
"""Writes the reference outputs scatter's tests compare with: the 2-D
scattering transform of order 2 computed with numpy (Debian's python3-numpy)
from the published formulas of kymatio's Scattering2D (filter_bank.py and
core/scattering2d.py: Morlet filters built in space over a 5x5 periodised
grid, their DFT's real part, low frequencies cropped and periodised for
coarser resolutions; reflect padding; products of spectra, subsampling by
periodising the spectrum, modulus), written for this test, independently of
the Go code. Run from the repository root:

    /usr/bin/python3 scatter/testdata/reference.py

Each case writes <name>.in.f32 (the images) and <name>.out.f32 (the
transform), little-endian float32, and the cases' sizes to cases.txt.
"""
import numpy as np

def gabor(M, N, sigma, theta, xi, slant=1.0):
    g = np.zeros((M, N), np.complex128)
    R = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
    Rinv = np.array([[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]])
    D = np.array([[1, 0], [0, slant * slant]])
    curv = R @ D @ Rinv / (2 * sigma * sigma)
    for ex in range(-2, 3):
        for ey in range(-2, 3):
            xx, yy = np.mgrid[ex * M:M + ex * M, ey * N:N + ey * N]
            arg = -(curv[0, 0] * xx * xx + (curv[0, 1] + curv[1, 0]) * xx * yy + curv[1, 1] * yy * yy) \
                + 1j * (xx * xi * np.cos(theta) + yy * xi * np.sin(theta))
            g += np.exp(arg)
    return g / (2 * 3.1415 * sigma * sigma / slant)

def morlet(M, N, sigma, theta, xi, slant):
    wv = gabor(M, N, sigma, theta, xi, slant)
    env = gabor(M, N, sigma, theta, 0, slant)
    return wv - np.sum(wv) / np.sum(env) * env

def periodise(f, res):
    M, N = f.shape
    f = f.copy()
    lx, sx = int(M * (1 - 2 ** (-res))), int(M * 2 ** (-res - 1))
    ly, sy = int(N * (1 - 2 ** (-res))), int(N * 2 ** (-res - 1))
    f[sx:sx + lx, :] = 0
    f[:, sy:sy + ly] = 0
    k = 2 ** res
    return f.reshape(k, M // k, k, N // k).sum(axis=(0, 2))

def filters(M, N, J, L):
    psi = []
    for j in range(J):
        for t in range(L):
            f = np.real(np.fft.fft2(morlet(M, N, 0.8 * 2 ** j, (int(L - L / 2 - 1) - t) * np.pi / L,
                                           3.0 / 4.0 * np.pi / 2 ** j, 4.0 / L)))
            psi.append({'j': j, 'res': {r: periodise(f, r) for r in range(max(1, j))}})
    f = np.real(np.fft.fft2(gabor(M, N, 0.8 * 2 ** (J - 1), 0, 0)))
    phi = {r: periodise(f, r) for r in range(J)}
    return psi, phi

def sub(x, k):
    M, N = x.shape
    return x.reshape(k, M // k, k, N // k).mean(axis=(0, 2))

def scattering(x, J, L):
    M, N = x.shape
    Mp, Np = ((M + 2 ** J) // 2 ** J + 1) * 2 ** J, ((N + 2 ** J) // 2 ** J + 1) * 2 ** J
    psi, phi = filters(Mp, Np, J, L)
    xp = np.pad(x, (((Mp - M) // 2, (Mp - M + 1) // 2), ((Np - N) // 2, (Np - N + 1) // 2)), mode='reflect')
    unpad = lambda s: s[1:-1, 1:-1]
    U0 = np.fft.fft2(xp)
    S0 = [unpad(np.real(np.fft.ifft2(sub(U0 * phi[0], 2 ** J))))]
    S1, S2 = [], []
    for p1 in psi:
        j1 = p1['j']
        U1 = sub(U0 * p1['res'][0], 2 ** j1)
        U1 = np.fft.fft2(np.abs(np.fft.ifft2(U1)))
        S1.append(unpad(np.real(np.fft.ifft2(sub(U1 * phi[j1], 2 ** (J - j1))))))
        for p2 in psi:
            j2 = p2['j']
            if j2 <= j1:
                continue
            U2 = sub(U1 * p2['res'][j1], 2 ** (j2 - j1))
            U2 = np.fft.fft2(np.abs(np.fft.ifft2(U2)))
            S2.append(unpad(np.real(np.fft.ifft2(sub(U2 * phi[j2], 2 ** (J - j2))))))
    return np.stack(S0 + S1 + S2)

rng = np.random.default_rng(2021)
cases = []
for name, (H, W, J, L, n) in {'fmnist': (28, 28, 2, 8, 3), 'cifar': (32, 32, 2, 8, 2), 'j3': (32, 24, 3, 4, 2)}.items():
    # smooth blobs plus noise, in [0, 1]
    yy, xx = np.mgrid[0:H, 0:W]
    imgs = []
    for _ in range(n):
        c = rng.uniform([H / 4, W / 4], [3 * H / 4, 3 * W / 4])
        img = np.exp(-((yy - c[0]) ** 2 + (xx - c[1]) ** 2) / (2 * rng.uniform(2, 6) ** 2))
        imgs.append(np.clip(img + 0.1 * rng.standard_normal((H, W)), 0, 1).astype(np.float32))
    imgs = np.stack(imgs)
    out = np.stack([scattering(x.astype(np.float64), J, L) for x in imgs])
    imgs.astype('<f4').tofile('scatter/testdata/%s.in.f32' % name)
    out.astype('<f4').tofile('scatter/testdata/%s.out.f32' % name)
    cases.append('%s %d %d %d %d %d %d %d %d' % ((name, H, W, J, L, n) + out.shape[1:]))
open('scatter/testdata/cases.txt', 'w').write('\n'.join(cases) + '\n')
