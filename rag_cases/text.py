"""Tokenization for BM25: jieba for Chinese, lower-cased words for English."""

from __future__ import annotations

import logging
import re
from functools import cache

import jieba
import jieba.posseg

_WORD = re.compile(r"[0-9a-z]+|[\u4e00-\u9fff]+")
STOPWORDS = frozenset(
    "的 了 吗 呢 吧 是 在 和 与 及 我 我们 我的 你 帮 帮我 请 一下 哪些 哪个 什么 怎么 怎样 如何 "
    "多少 为 对 把 被 有 能 会 要 想 给 这个 那个 这些 那些 还 都 也 就 呀 啊 "
    "the a an of in on at for to and or what which how is are was were my me i we our do "
    "does did with by from about this that these those it its be can should could would "
    "please tell show give".split()
)


@cache
def _jieba() -> jieba.Tokenizer:
    """One initialised tokenizer (loading its dictionary takes about a second)."""
    logging.getLogger("jieba").setLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    tokenizer.initialize()
    return tokenizer


@cache
def _pos() -> jieba.posseg.POSTokenizer:
    """Part-of-speech tagging over the same initialised dictionary (not a second one)."""
    return jieba.posseg.POSTokenizer(_jieba())


def pos_tags(text: str) -> list[tuple[str, str]]:
    """(word, jieba part-of-speech flag) of each word of ``text``."""
    return [(w.word, w.flag) for w in _pos().cut(text)]


def tokenize(text: str) -> list[str]:
    """Search-mode tokens without stopwords and punctuation."""
    tokens = []
    for piece in _jieba().cut_for_search(text.lower()):
        piece = piece.strip()
        if piece and _WORD.fullmatch(piece) and piece not in STOPWORDS:
            tokens.append(_stem(piece))
    return tokens


def _stem(token: str) -> str:
    """Very light English plural folding ('categories' -> 'category', 'fryers' -> 'fryer')."""
    if token.isascii() and len(token) > 4:
        if token.endswith("ies"):
            return token[:-3] + "y"
        if token.endswith("s") and not token.endswith("ss"):
            return token[:-1]
    return token
