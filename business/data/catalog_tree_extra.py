"""Catalog data, part 3: further generated top-level categories."""

from __future__ import annotations

from business.data.catalog_spec import Spec, group, leaf, top

IMPROVEMENT = top(
    None,
    "家装建材",
    "Home Improvement",
    "home",
    "improvement",
    group(
        "灯具照明",
        "Lighting",
        leaf("吸顶灯", "Ceiling lights", 400),
        leaf("台灯", "Desk lamps", 200, "school"),
        leaf("落地灯", "Floor lamps", 300),
    ),
    group(
        "卫浴用品",
        "Bathroom fixtures",
        leaf("花洒", "Shower sets", 400),
        leaf("智能马桶盖", "Smart toilet seats", 1500, "winter", flags="hot"),
        leaf("浴室柜", "Bathroom vanities", 1500),
    ),
    group(
        "五金工具",
        "Hardware & tools",
        leaf("电钻", "Power drills", 300, flags="male"),
        leaf("工具箱", "Toolboxes", 150, flags="male"),
        leaf("智能门锁", "Smart door locks", 1500),
    ),
    group(
        "墙地面材料",
        "Wall & floor materials",
        leaf("墙纸", "Wallpaper", 150, flags="decl"),
        leaf("木地板", "Wood flooring", 200, "transit"),
        leaf("瓷砖", "Tiles", 100, "transit"),
    ),
)

BAGS = top(
    None,
    "箱包皮具",
    "Bags & Luggage",
    "fashion",
    "fashion",
    group(
        "女士包袋",
        "Women's bags",
        leaf("单肩包", "Shoulder bags", 400),
        leaf("斜挎包", "Crossbody bags", 300),
        leaf("托特包", "Tote bags", 250),
        leaf("手拿包", "Clutches", 300, "gifting", flags="decl"),
        flags="female",
    ),
    group(
        "男士包袋",
        "Men's bags",
        leaf("公文包", "Briefcases", 500, flags="decl"),
        leaf("腰包", "Waist bags", 150),
        flags="male",
    ),
    group(
        "旅行箱包",
        "Travel bags",
        leaf("拉杆箱", "Suitcases", 600, "summer"),
        leaf("旅行收纳袋", "Packing cubes", 50, "summer", flags="low"),
        leaf("旅行背包", "Travel backpacks", 300, "summer"),
    ),
    group(
        "钱包卡包",
        "Wallets",
        leaf("长款钱包", "Long wallets", 250, "gifting"),
        leaf("卡包", "Card holders", 100),
    ),
    group(
        "双肩背包",
        "Backpacks",
        leaf("学生书包", "School bags", 200, "school"),
        leaf("电脑双肩包", "Laptop backpacks", 250),
    ),
)

TEA = top(
    None,
    "茶饮冲调",
    "Tea & Beverages",
    "food",
    "tea",
    group(
        "茶叶",
        "Tea",
        group(
            "绿茶",
            "Green tea",
            leaf("龙井", "Longjing tea", 300, "springtea"),
            leaf("碧螺春", "Biluochun tea", 250, "springtea"),
        ),
        group(
            "红茶",
            "Black tea",
            leaf("正山小种", "Lapsang souchong", 200, "cool"),
            leaf("滇红", "Dianhong black tea", 150, "cool"),
        ),
        group(
            "乌龙茶",
            "Oolong tea",
            leaf("铁观音", "Tieguanyin", 200),
            leaf("大红袍", "Da Hong Pao", 250),
        ),
        leaf("普洱茶", "Pu'er tea", 300, flags="decl"),
        leaf("白茶", "White tea", 300, flags="hot"),
        season="cny",
    ),
    group(
        "咖啡",
        "Coffee",
        leaf("速溶咖啡", "Instant coffee", 60, flags="decl"),
        leaf("咖啡豆", "Coffee beans", 120),
        leaf("挂耳咖啡", "Drip bag coffee", 70, flags="hot"),
        leaf("冷萃咖啡液", "Cold brew concentrate", 80, "summer", flags="hot low"),
    ),
    group(
        "冲调饮品",
        "Drink mixes",
        leaf("燕麦片", "Oatmeal", 50),
        leaf("蜂蜜", "Honey", 80),
        leaf("代餐粉", "Meal replacement shakes", 120, flags="decl"),
        leaf("奶茶粉", "Milk tea powder", 40, "cool"),
    ),
    group(
        "花草茶",
        "Herbal tea",
        leaf("菊花茶", "Chrysanthemum tea", 40, "summer"),
        leaf("玫瑰花茶", "Rose tea", 50),
        leaf("养生茶", "Wellness tea", 60, flags="hot"),
    ),
)

APPLIANCES = top(
    None,
    "生活电器",
    "Home Appliances",
    "appliance",
    "appliance",
    group(
        "环境电器",
        "Climate appliances",
        leaf("空气净化器", "Air purifiers", 1200, "dry"),
        leaf("加湿器", "Humidifiers", 200, "dry"),
        leaf("电风扇", "Electric fans", 250, "summer"),
        leaf("取暖器", "Space heaters", 300, "winter"),
        leaf("除湿机", "Dehumidifiers", 1200, "humid"),
    ),
    group(
        "清洁电器",
        "Cleaning appliances",
        leaf("扫地机器人", "Robot vacuums", 2500, flags="hot"),
        leaf("吸尘器", "Vacuum cleaners", 900, flags="decl"),
        leaf("洗地机", "Wet-dry floor cleaners", 2500, flags="hot"),
        leaf("除螨仪", "Mite removers", 300),
    ),
    group(
        "衣物护理",
        "Garment care",
        leaf("挂烫机", "Garment steamers", 300),
        leaf("电熨斗", "Irons", 150, flags="decl"),
    ),
)

SHOES = top(
    None,
    "鞋靴",
    "Shoes",
    "fashion",
    "fashion",
    group(
        "女鞋",
        "Women's shoes",
        leaf("高跟鞋", "High heels", 400, flags="decl"),
        leaf("乐福鞋", "Loafers", 350, "transit"),
        leaf("凉鞋", "Sandals", 250, "summer"),
        leaf("雪地靴", "Snow boots", 350, "winter"),
        leaf("小白鞋", "White sneakers", 300, "warm"),
        flags="female",
    ),
    group(
        "男鞋",
        "Men's shoes",
        leaf("商务皮鞋", "Dress shoes", 500),
        leaf("休闲鞋", "Casual shoes", 350),
        leaf("马丁靴", "Martin boots", 450, "winter"),
        flags="male",
    ),
    group(
        "儿童鞋",
        "Kids' shoes",
        leaf("学步鞋", "Toddler shoes", 150),
        leaf("儿童运动鞋", "Kids' sneakers", 250, "school"),
    ),
)

JEWELRY = top(
    None,
    "珠宝配饰",
    "Jewelry & Accessories",
    "fashion",
    "fashion",
    group(
        "时尚饰品",
        "Fashion jewelry",
        leaf("耳饰", "Earrings", 120),
        leaf("项链", "Necklaces", 200),
        leaf("手链", "Bracelets", 150),
        leaf("发饰", "Hair accessories", 40),
        flags="female",
    ),
    group(
        "黄金珠宝",
        "Fine jewelry",
        leaf("黄金首饰", "Gold jewelry", 3000, flags="hot"),
        leaf("珍珠饰品", "Pearl jewelry", 800),
        leaf("钻戒", "Diamond rings", 6000, flags="decl"),
    ),
    group(
        "眼镜",
        "Eyewear",
        leaf("太阳镜", "Sunglasses", 300, "summer"),
        leaf("眼镜框", "Eyeglass frames", 400),
    ),
    group(
        "腕表",
        "Watches",
        leaf("机械表", "Mechanical watches", 3000, flags="male"),
        leaf("石英表", "Quartz watches", 800),
    ),
    season="gifting",
)

GROCERY = top(
    None,
    "粮油调味",
    "Grocery & Cooking",
    "food",
    "grocery",
    group(
        "米面杂粮",
        "Rice & grains",
        leaf("大米", "Rice", 80),
        leaf("挂面", "Dried noodles", 30),
        leaf("方便面", "Instant noodles", 40, flags="decl"),
        leaf("杂粮", "Mixed grains", 50, flags="hot"),
    ),
    group(
        "调味品",
        "Condiments",
        leaf("酱油", "Soy sauce", 30),
        leaf("火锅底料", "Hotpot base", 40, "winter"),
        leaf("醋", "Vinegar", 25),
        leaf("蚝油", "Oyster sauce", 20),
    ),
    group(
        "食用油",
        "Cooking oil",
        leaf("花生油", "Peanut oil", 150, "cny"),
        leaf("橄榄油", "Olive oil", 150),
        leaf("菜籽油", "Rapeseed oil", 100),
    ),
)

EXTRA_TOPS: tuple[Spec, ...] = (
    IMPROVEMENT,
    BAGS,
    TEA,
    APPLIANCES,
    SHOES,
    JEWELRY,
    GROCERY,
)
