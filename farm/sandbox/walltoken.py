"""What a wall page's script computes, in Python: the hash behind the session tokens of the sandbox's walls
(walls.py).

A token is lanes of 32-bit FNV-1a run over the UTF-8 bytes of `challenge|User-Agent`, several rounds per lane,
each round ending in an integer avalanche; each lane is 8 hex digits. The pages run the same function (the
script in `JS`, written to be hard to read at a glance), so a client either runs the page or computes this.
Each site's token, from what its wall serves, is in its package's wall.py (farm/sites/<site>/wall.py).
"""

MASK = 0xFFFFFFFF
FNV_OFFSET, FNV_PRIME = 0x811C9DC5, 0x01000193
LANE_SALT, MIX_A, MIX_B = 0x9E3779B1, 0x85EBCA6B, 0xC2B2AE35
ROUNDS = 3


def mix(text: str, lanes: int) -> str:
    """The hex digest the wall scripts compute: `lanes` × 8 lowercase hex digits."""
    data = text.encode()
    out = []
    for lane in range(lanes):
        h = (FNV_OFFSET ^ ((lane + 1) * LANE_SALT)) & MASK
        for _ in range(ROUNDS):
            for byte in data:
                h = ((h ^ byte) * FNV_PRIME) & MASK
            h ^= h >> 16
            h = (h * MIX_A) & MASK
            h ^= h >> 13
            h = (h * MIX_B) & MASK
            h ^= h >> 16
        out.append(f"{h:08x}")
    return "".join(out)


# The same function in the pages' JavaScript: _0x5c(text, lanes) returns mix(text, lanes). Math.imul keeps
# the products in 32 bits, as `& MASK` does above; `>>> 0` reads them unsigned.
JS = (
    "var _0x1f=[0x811c9dc5,0x1000193,0x9e3779b1,0x85ebca6b,0xc2b2ae35,0x3,0x10,0xd];"
    "function _0x5c(_0xa,_0xb){var _0xc=new TextEncoder()['\\x65\\x6e\\x63\\x6f\\x64\\x65'](_0xa),_0xd='';"
    "for(var _0xe=0x0;_0xe<_0xb;_0xe++){var _0xf=(_0x1f[0x0]^Math.imul(_0xe+0x1,_0x1f[0x2]))>>>0x0;"
    "for(var _0x10=0x0;_0x10<_0x1f[0x5];_0x10++){for(var _0x11=0x0;_0x11<_0xc.length;_0x11++)"
    "{_0xf=Math.imul(_0xf^_0xc[_0x11],_0x1f[0x1])>>>0x0;}_0xf=(_0xf^_0xf>>>_0x1f[0x6])>>>0x0;"
    "_0xf=Math.imul(_0xf,_0x1f[0x3])>>>0x0;_0xf=(_0xf^_0xf>>>_0x1f[0x7])>>>0x0;"
    "_0xf=Math.imul(_0xf,_0x1f[0x4])>>>0x0;_0xf=(_0xf^_0xf>>>_0x1f[0x6])>>>0x0;}"
    "_0xd+=('\\x30\\x30\\x30\\x30\\x30\\x30\\x30'+_0xf['\\x74\\x6f\\x53\\x74\\x72\\x69\\x6e\\x67'](0x10))"
    "['\\x73\\x6c\\x69\\x63\\x65'](-0x8);}return _0xd;}"
)
