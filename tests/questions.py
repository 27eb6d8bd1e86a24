"""The canonical questions the end-to-end tests ask."""

SKINCARE = (
    "我想研发美容护肤类的新品，请帮我分析一下我适合研发哪类新品（选10个竞争强度最低的叶子类目），"
    "并帮我分析一下我可能对标的竞品（这些机会类目对应的Top20竞品）有什么特点？"
)
LOOKUP = "2025年12月女装连衣裙类目下销售额为多少？"
