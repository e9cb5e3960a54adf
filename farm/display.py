"""Text that farm prints or logs: never a secret, never a control character.

``without_secrets`` masks passwords in any text (a URL, or a driver's error about one),
whatever the form they were given in; ``escape`` shows control characters as escapes,
so that a value stored by a client cannot clear the operator's screen or retitle the window.
"""

import re
import unicodedata
from urllib.parse import unquote

MASK = "***"
# scheme://user:password@ anywhere in a text: everything up to the last @ of the word
_USERINFO = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:)[^\s@]*@")
# query parameters that may carry a secret to a driver (?password=, ?passwd=, ?pwd=, ?token=, ...)
# (up to the next parameter, or a ": " that ends the URL in a message; a value masked already is left)
_SECRET_PARAM = re.compile(
    r"([?&][^=&\s]*(?:pass|pwd|secret|token|auth|key)[^=&\s]*=)"
    r"(?!\*\*\*)(?:(?!:\s|:$)[^&\s#'\"])*",
    re.IGNORECASE,
)
# pieces of a password shorter than this are not masked on their own (they would mask ordinary words)
_MIN_PIECE = 3
_SPLIT = re.compile(r"[/:?#@&=]")


def secrets_in(url) -> list[str]:
    """The secrets a URL holds, as written and decoded, and the pieces a parser may cut them into
    (a password holding ``/`` is read by some parsers as a host and a path)."""
    text = str(url or "")
    found = []
    scheme, sep, rest = text.partition("://")
    if sep and "@" in rest:
        userinfo = rest.rpartition("@")[0]
        if ":" in userinfo:
            found.append(userinfo.partition(":")[2])
    found += [match.group(0).partition("=")[2] for match in _SECRET_PARAM.finditer(text)]
    pieces = []
    for secret in found:
        for form in {secret, unquote(secret)}:
            pieces.append(form)
            pieces += _SPLIT.split(form)
    return sorted({p for p in pieces if len(p) >= _MIN_PIECE}, key=len, reverse=True)


def _mask_userinfo(match) -> str:
    password = match.group(0)[len(match.group(1)) : -1]
    # the placeholder of farm's own examples (user:password@host) is no secret
    return match.group(0) if password in ("password", MASK) else f"{match.group(1)}{MASK}@"


def mask_secret_params(text: str) -> str:
    """``text`` with the values of password-like query parameters (``?password=``, ``?token=``...) masked."""
    return _SECRET_PARAM.sub(rf"\1{MASK}", text)


def without_secrets(text, *urls) -> str:
    """``text`` with every password masked: in ``user:password@``, in password-like query
    parameters, and wherever a secret of one of ``urls`` (the settings it may quote) appears."""
    shown = str(text)
    for secret in {s for url in urls for s in secrets_in(url)}:
        shown = shown.replace(secret, MASK)
    shown = _USERINFO.sub(_mask_userinfo, shown)
    return mask_secret_params(shown)


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\x1b": "\\e"}


def escape(text) -> str:
    """``text`` with control, format and separator characters shown as escapes (``\\e``, ``\\x07``,
    ``\\u202e``): printed, it is exactly what is stored, and it moves no cursor."""
    out = []
    for ch in str(text):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co"):
            code = ord(ch)
            out.append(_NAMED.get(ch) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"))
        else:
            out.append(ch)
    return "".join(out)


def mask_url(url) -> str:
    """``url`` as written, with its password and password-like query values shown as ``***``.

    Works on any text, URL or not (it never raises), so that an error about a malformed
    URL can still show it: everything between ``user:`` and the last ``@`` is masked,
    and without an ``@``, a ``user:word`` whose word is not a port number.
    """
    text = str(url)
    scheme, sep, rest = text.partition("://")
    if not sep:
        scheme, rest = "", text
    else:
        scheme += sep
    user, colon, after = rest.partition(":")
    if colon and not any(ch in user for ch in "/?@["):  # user:... (not a path, not an IPv6 host)
        if "@" in after:
            rest = f"{user}:***@{after.rpartition('@')[2]}"
        else:
            port = re.match(r"[^/?#]*", after).group()
            if user and port and not port.isdigit():  # no @host: the word may be a password
                rest = f"{user}:***{after[len(port) :]}"
    masked = f"{scheme}{rest}"
    return mask_secret_params(masked)
