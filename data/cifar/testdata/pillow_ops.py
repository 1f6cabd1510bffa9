#!/usr/bin/python3
"""Writes pillow_ops.json.gz, the fixtures of TestOpsMatchPillow.

Every AutoAugment operation at every magnitude torchvision's AutoAugment
uses (all 10 bins, both signs of the signed ones) applied by Pillow to a few
small grey and RGB images, exactly as torchvision's _apply_op applies it to a
PIL image: F.affine -> Image.transform(AFFINE, matrix of
_get_inverse_affine_matrix, NEAREST, fillcolor=0), F.rotate -> Image.rotate,
F.adjust_* -> ImageEnhance, F.posterize/solarize/autocontrast/equalize/invert
-> ImageOps. The magnitudes are torch.linspace's, emulated in float32 the way
torch computes it (the two halves from opposite ends).

Run once with Debian's python3-pil (Pillow 9.4.0):
    /usr/bin/python3 pillow_ops.py
"""
import base64
import gzip
import json
import math
import random
import struct

import PIL
from PIL import Image, ImageEnhance, ImageOps


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def linspace(start, end, steps=10):
    """torch.linspace in float32: step = (end-start)/(steps-1); the first
    half start + step*i, the second end - step*(steps-1-i)."""
    start, end = f32(start), f32(end)
    step = f32(f32(end - start) / (steps - 1))
    out = []
    for i in range(steps):
        if i < steps // 2:
            out.append(f32(start + f32(step * i)))
        else:
            out.append(f32(end - f32(step * (steps - 1 - i))))
    return out


def space(w, h):
    """torchvision's AutoAugment._augmentation_space(10, [w, h])."""
    posterize = []
    for i in range(10):
        q = f32(i / f32((10 - 1) / 4))  # arange / 2.25 in float32
        posterize.append(8 - round(q))  # torch.round: half to even, like Python's
    return {
        "ShearX": (linspace(0.0, 0.3), True),
        "ShearY": (linspace(0.0, 0.3), True),
        "TranslateX": (linspace(0.0, 150.0 / 331.0 * w), True),
        "TranslateY": (linspace(0.0, 150.0 / 331.0 * h), True),
        "Rotate": (linspace(0.0, 30.0), True),
        "Brightness": (linspace(0.0, 0.9), True),
        "Color": (linspace(0.0, 0.9), True),
        "Contrast": (linspace(0.0, 0.9), True),
        "Sharpness": (linspace(0.0, 0.9), True),
        "Posterize": ([float(p) for p in posterize], False),
        "Solarize": (linspace(255.0, 0.0), False),
        "AutoContrast": (None, False),
        "Equalize": (None, False),
        "Invert": (None, False),
    }


def inverse_affine(center, angle, translate, scale, shear):
    """torchvision.transforms.functional._get_inverse_affine_matrix."""
    rot = math.radians(angle)
    sx, sy = math.radians(shear[0]), math.radians(shear[1])
    cx, cy = center
    tx, ty = translate
    a = math.cos(rot - sy) / math.cos(sy)
    b = -math.cos(rot - sy) * math.tan(sx) / math.cos(sy) - math.sin(rot)
    c = math.sin(rot - sy) / math.cos(sy)
    d = -math.sin(rot - sy) * math.tan(sx) / math.cos(sy) + math.cos(rot)
    m = [d, -b, 0.0, -c, a, 0.0]
    m = [x / scale for x in m]
    m[2] += m[0] * (-cx - tx) + m[1] * (-cy - ty)
    m[5] += m[3] * (-cx - tx) + m[4] * (-cy - ty)
    m[2] += cx
    m[5] += cy
    return m


def affine(img, angle, translate, shear, center=None):
    """torchvision F.affine of a PIL image (NEAREST, fill None -> 0)."""
    w, h = img.size
    if center is None:
        center = [w * 0.5, h * 0.5]
    m = inverse_affine(center, angle, translate, 1.0, shear)
    return img.transform(img.size, Image.AFFINE, m, Image.NEAREST, fillcolor=0)


def apply_op(img, op, mag):
    """torchvision.transforms.autoaugment._apply_op for a PIL image."""
    if op == "ShearX":
        return affine(img, 0.0, [0, 0], [math.degrees(math.atan(mag)), 0.0], [0, 0])
    if op == "ShearY":
        return affine(img, 0.0, [0, 0], [0.0, math.degrees(math.atan(mag))], [0, 0])
    if op == "TranslateX":
        return affine(img, 0.0, [int(mag), 0], [0.0, 0.0])
    if op == "TranslateY":
        return affine(img, 0.0, [0, int(mag)], [0.0, 0.0])
    if op == "Rotate":
        return img.rotate(mag, Image.NEAREST, expand=False, center=None, fillcolor=0)
    if op == "Brightness":
        return ImageEnhance.Brightness(img).enhance(1.0 + mag)
    if op == "Color":
        return ImageEnhance.Color(img).enhance(1.0 + mag)
    if op == "Contrast":
        return ImageEnhance.Contrast(img).enhance(1.0 + mag)
    if op == "Sharpness":
        return ImageEnhance.Sharpness(img).enhance(1.0 + mag)
    if op == "Posterize":
        return ImageOps.posterize(img, int(mag))
    if op == "Solarize":
        return ImageOps.solarize(img, mag)
    if op == "AutoContrast":
        return ImageOps.autocontrast(img)
    if op == "Equalize":
        return ImageOps.equalize(img)
    if op == "Invert":
        return ImageOps.invert(img)
    raise ValueError(op)


def planes(img):
    """The image's bytes channel-major, as package cifar's Image holds them."""
    return b"".join(band.tobytes() for band in img.split())


def make_image(mode, w, h, rng):
    """Random pixels in a band narrower than [0, 255] (so that AutoContrast
    and Equalize have work), over a gradient, different per channel."""
    bands = []
    for c in range(len(mode)):
        lo, hi = 20 + 30 * c, 180 + 20 * c
        data = bytes(min(255, max(0, rng.randint(lo, hi) // 2 + (x + y) * 60 // (w + h))) for y in range(h) for x in range(w))
        bands.append(Image.frombytes("L", (w, h), data))
    return bands[0] if mode == "L" else Image.merge(mode, bands)


def main():
    rng = random.Random(33)
    # The small images take every operation; the 32x32 one, the size of
    # CIFAR and of the Fashion-MNIST canvas, the geometric ones.
    images = {
        "grey13x9": make_image("L", 13, 9, rng),  # w 13, h 9: catches swapped axes
        "rgb7x10": make_image("RGB", 7, 10, rng),
        "grey32": make_image("L", 32, 32, rng),
    }
    geometric = {"ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate"}
    out = {"pillow": PIL.__version__, "images": {}, "cases": []}
    for name, img in images.items():
        w, h = img.size
        out["images"][name] = {"c": len(img.getbands()), "h": h, "w": w, "pix": base64.b64encode(planes(img)).decode()}
        for op, (mags, signed) in space(w, h).items():
            if name == "grey32" and op not in geometric:
                continue
            for b in range(10) if mags is not None else [None]:
                for sign in (1, -1) if signed else (1,):
                    mag = 0.0 if b is None else sign * mags[b]
                    res = apply_op(img, op, mag)
                    out["cases"].append({"image": name, "op": op, "bin": b if b is not None else 0, "sign": sign,
                                         "magnitude": mag, "pix": base64.b64encode(planes(res)).decode()})
    with gzip.GzipFile("pillow_ops.json.gz", "wb", mtime=0) as f:
        f.write(json.dumps(out, separators=(",", ":")).encode())


main()
