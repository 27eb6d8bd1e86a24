"""Catalog data, part 2: generated top-level categories (ids derived from their paths)."""

from __future__ import annotations

from business.data.catalog_spec import Spec, group, leaf, top

MENSWEAR = top(
    None,
    "男装",
    "Menswear",
    "apparel",
    "mens",
    group(
        "男士上装",
        "Men's tops",
        leaf("Polo衫", "Polo shirts", 200, "warm"),
        leaf("商务衬衣", "Dress shirts", 220),
        leaf("男士毛衣", "Men's sweaters", 300, "cool"),
        leaf("圆领短袖", "Crew-neck tees", 90, "warm"),
    ),
    group(
        "男士外套",
        "Men's outerwear",
        leaf("夹克", "Jackets", 400, "transit"),
        leaf("棉服", "Padded jackets", 450, "winter"),
        leaf("男士大衣", "Men's overcoats", 900, "winter"),
    ),
    group(
        "男裤",
        "Men's trousers",
        leaf("工装裤", "Cargo pants", 200, flags="hot"),
        leaf("西裤", "Dress trousers", 260, flags="decl"),
        leaf("短裤", "Shorts", 100, "summer"),
    ),
    group(
        "男士配件",
        "Men's accessories",
        leaf("领带", "Ties", 150, "gifting", flags="decl"),
        leaf("皮带", "Belts", 180, "gifting"),
    ),
    group(
        "男士内衣",
        "Men's underwear",
        leaf("男士内裤", "Men's briefs", 80),
        leaf("袜子", "Socks", 40, "cool"),
        leaf("保暖内衣", "Thermal underwear", 150, "winter"),
    ),
    flags="male",
)

DIGITAL = top(
    None,
    "手机数码",
    "Phones & Digital",
    "digital",
    "digital",
    group(
        "手机",
        "Mobile phones",
        leaf("智能手机", "Smartphones", 3500),
        leaf("老年手机", "Senior phones", 250, flags="decl"),
        leaf("折叠屏手机", "Foldable phones", 8000, flags="hot"),
    ),
    group(
        "手机配件",
        "Phone accessories",
        group(
            "充电设备",
            "Charging gear",
            leaf("充电宝", "Power banks", 150),
            leaf("充电器", "Chargers", 90),
            leaf("数据线", "Charging cables", 40),
            flags="small",
        ),
        group(
            "保护壳膜",
            "Cases & protectors",
            leaf("手机壳", "Phone cases", 50),
            leaf("钢化膜", "Screen protectors", 30),
        ),
    ),
    group(
        "耳机音箱",
        "Audio",
        leaf("真无线耳机", "True wireless earbuds", 400),
        leaf("头戴式耳机", "Over-ear headphones", 800),
        leaf("蓝牙音箱", "Bluetooth speakers", 300, flags="decl"),
    ),
    group(
        "智能穿戴",
        "Wearables",
        leaf("智能手表", "Smartwatches", 1500, flags="hot"),
        leaf("智能手环", "Fitness bands", 250, flags="decl"),
    ),
    leaf("平板电脑", "Tablets", 3000, "school"),
    group(
        "影音摄像",
        "Cameras & video",
        leaf("运动相机", "Action cameras", 2500, "summer"),
        leaf("拍立得", "Instant cameras", 600, "gifting"),
        leaf("无人机", "Drones", 4000),
    ),
)

HOME = top(
    None,
    "家居日用",
    "Home & Living",
    "home",
    "home",
    group(
        "收纳整理",
        "Storage",
        leaf("收纳箱", "Storage boxes", 60),
        leaf("衣架", "Hangers", 40),
        leaf("真空压缩袋", "Vacuum storage bags", 50, "transit"),
    ),
    group(
        "清洁用品",
        "Cleaning supplies",
        leaf("拖把", "Mops", 80),
        leaf("垃圾袋", "Trash bags", 20),
        leaf("厨房清洁剂", "Kitchen cleaner", 30, "cny"),
    ),
    group(
        "床上用品",
        "Bedding",
        leaf("床品四件套", "Bedding sets", 300),
        leaf("枕头", "Pillows", 120),
        leaf("被子", "Duvets", 400, "winter"),
        leaf("凉席", "Summer sleeping mats", 200, "summer"),
    ),
    group(
        "纸品湿巾",
        "Paper & wipes",
        leaf("抽纸", "Facial tissues", 50),
        leaf("卷纸", "Toilet rolls", 45),
        leaf("湿巾", "Wet wipes", 25),
    ),
    group(
        "餐具水具",
        "Tableware",
        leaf("保温杯", "Insulated bottles", 120, "cool"),
        leaf("碗碟套装", "Dinnerware sets", 200),
        leaf("玻璃杯", "Glassware", 50),
    ),
)

BABY = top(
    None,
    "母婴",
    "Mother & Baby",
    "baby",
    "baby",
    group(
        "奶粉辅食",
        "Formula & baby food",
        group(
            "婴幼儿奶粉",
            "Infant formula",
            leaf("一段奶粉", "Stage 1 formula", 350, flags="decl"),
            leaf("二段奶粉", "Stage 2 formula", 330, flags="decl"),
            leaf("三段奶粉", "Stage 3 formula", 300),
        ),
        group(
            "婴儿辅食",
            "Baby food",
            leaf("婴儿米粉", "Baby rice cereal", 60),
            leaf("果泥", "Fruit puree", 40),
        ),
    ),
    group(
        "尿裤湿巾",
        "Diapers & wipes",
        leaf("纸尿裤", "Diapers", 150, flags="decl"),
        leaf("拉拉裤", "Pull-up pants", 160),
        leaf("婴儿湿巾", "Baby wipes", 40),
    ),
    group(
        "喂养用品",
        "Feeding",
        leaf("奶瓶", "Baby bottles", 120),
        leaf("吸奶器", "Breast pumps", 500),
        leaf("安抚奶嘴", "Pacifiers", 50),
    ),
    group(
        "童车童床",
        "Strollers & cribs",
        leaf("婴儿推车", "Strollers", 1200),
        leaf("安全座椅", "Car seats", 1500),
        leaf("婴儿床", "Cribs", 1000),
    ),
    group(
        "孕产用品",
        "Maternity",
        leaf("孕妇装", "Maternity wear", 200),
        leaf("防溢乳垫", "Nursing pads", 50),
        leaf("妊娠纹霜", "Stretch mark cream", 180),
        flags="female",
    ),
)

SPORTS = top(
    None,
    "运动户外",
    "Sports & Outdoors",
    "sports",
    "sports",
    group(
        "运动鞋",
        "Sports shoes",
        leaf("跑步鞋", "Running shoes", 500),
        leaf("篮球鞋", "Basketball shoes", 700, flags="male"),
        leaf("板鞋", "Skate shoes", 350),
    ),
    group(
        "运动服饰",
        "Sportswear",
        leaf("瑜伽服", "Yoga wear", 250, flags="hot female"),
        leaf("运动文胸", "Sports bras", 180, flags="female"),
        leaf("运动套装", "Tracksuits", 350),
    ),
    group(
        "户外装备",
        "Outdoor gear",
        group(
            "露营装备",
            "Camping gear",
            leaf("帐篷", "Tents", 600, "summer", flags="hot"),
            leaf("睡袋", "Sleeping bags", 300, "summer"),
            leaf("折叠桌椅", "Folding tables & chairs", 300, "summer"),
            leaf("天幕", "Tarps", 400, "summer", flags="hot"),
        ),
        group(
            "户外服装",
            "Outdoor apparel",
            leaf("冲锋衣", "Hardshell jackets", 800, "transit", flags="hot"),
            leaf("速干衣", "Quick-dry shirts", 200, "summer"),
            leaf("徒步鞋", "Hiking boots", 600, "transit"),
        ),
    ),
    group(
        "健身器材",
        "Fitness equipment",
        leaf("瑜伽垫", "Yoga mats", 100),
        leaf("哑铃", "Dumbbells", 200),
        leaf("跑步机", "Treadmills", 3000, flags="decl"),
        leaf("跳绳", "Jump ropes", 40),
    ),
    group(
        "骑行运动",
        "Cycling",
        leaf("公路自行车", "Road bikes", 5000, "warm", flags="hot"),
        leaf("骑行头盔", "Cycling helmets", 300, "warm"),
    ),
)

PETS = top(
    None,
    "宠物用品",
    "Pet supplies",
    "pet",
    "pet",
    group(
        "猫咪用品",
        "Cat supplies",
        leaf("猫粮", "Cat food", 200),
        leaf("猫砂", "Cat litter", 80),
        leaf("猫零食", "Cat treats", 50),
        leaf("猫抓板", "Cat scratchers", 40),
        leaf("猫草", "Cat grass", 20, flags="low"),
        flags="small",
    ),
    group(
        "狗狗用品",
        "Dog supplies",
        leaf("狗粮", "Dog food", 220),
        leaf("狗零食", "Dog treats", 50),
        leaf("牵引绳", "Leashes", 60),
        leaf("狗窝", "Dog beds", 150, "winter"),
    ),
    group(
        "宠物保健",
        "Pet health",
        leaf("驱虫药", "Dewormers", 120, "warm"),
        leaf("营养膏", "Pet nutrition paste", 60, flags="low"),
        leaf("宠物益生菌", "Pet probiotics", 80, flags="hot"),
    ),
    group(
        "水族用品",
        "Aquarium",
        leaf("鱼缸", "Fish tanks", 300, flags="decl"),
        leaf("鱼粮", "Fish food", 30),
    ),
)

PERSONAL = top(
    None,
    "个人护理",
    "Personal care",
    "personal",
    "personal",
    group(
        "口腔护理",
        "Oral care",
        leaf("电动牙刷", "Electric toothbrushes", 300),
        leaf("牙膏", "Toothpaste", 40),
        leaf("冲牙器", "Water flossers", 300, flags="hot"),
        leaf("漱口水", "Mouthwash", 40),
    ),
    group(
        "洗发护发",
        "Hair care",
        leaf("洗发水", "Shampoo", 70),
        leaf("护发素", "Conditioner", 60),
        leaf("发膜", "Hair mask", 80),
        leaf("染发剂", "Hair dye", 90),
        leaf("生发液", "Hair growth tonic", 200, flags="hot"),
    ),
    group(
        "个护电器",
        "Grooming appliances",
        leaf("电吹风", "Hair dryers", 400),
        leaf("剃须刀", "Electric shavers", 400, "gifting", flags="male"),
        leaf("卷发棒", "Curling irons", 200, flags="female"),
        leaf("脱毛仪", "IPL devices", 1200, "warm", flags="hot female"),
    ),
    group(
        "女性护理",
        "Feminine care",
        leaf("卫生巾", "Sanitary pads", 50),
        leaf("卫生棉条", "Tampons", 60, flags="hot"),
        leaf("私处护理液", "Intimate wash", 60),
        flags="female",
    ),
)

MORE_TOPS: tuple[Spec, ...] = (MENSWEAR, DIGITAL, HOME, BABY, SPORTS, PETS, PERSONAL)
