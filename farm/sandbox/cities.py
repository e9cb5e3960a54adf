"""The cities the sandbox knows: their names, pinyin, places and districts, shared by every site.

A site's code for a city is its record's (farm.sites: the map of city names to codes of its package's
cities.py), the same map its spider and keyword validation read; a code names the first city of the map
given it that the sandbox knows, and a code of no such city is a city the site's imitation does not know.

Each city carries a few real districts, each with its pinyin initials (a site's address slug may take them)
and some business areas, so a posting's address belongs to its city.
"""

from dataclasses import dataclass

from farm.sites import get

NATIONWIDE = "全国"


@dataclass(frozen=True)
class City:
    name: str
    pinyin: str
    lat: float
    lng: float
    # (district, pinyin initials, business areas)
    districts: tuple = ()

    def code(self, site):
        """The site's code for the city, by its record's map (farm.sites); "" where it has none."""
        return get(site).cities.get(self.name, "")


def _d(*rows):
    return tuple((name, abbr, tuple(areas.split())) for name, abbr, areas in rows)


CITIES = (
    City(NATIONWIDE, "quanguo", 35.0, 105.0),
    City(
        "北京",
        "beijing",
        39.90,
        116.40,
        _d(
            ("海淀区", "hdq", "中关村 西二旗 上地 五道口"),
            ("朝阳区", "cyq", "望京 国贸 酒仙桥 三里屯"),
            ("东城区", "dcq", "东直门 王府井"),
            ("西城区", "xcq", "金融街 西单"),
            ("丰台区", "ftq", "丽泽 科技园区"),
            ("昌平区", "cpq", "回龙观 沙河"),
            ("大兴区", "dxq", "亦庄 黄村"),
        ),
    ),
    City(
        "上海",
        "shanghai",
        31.23,
        121.47,
        _d(
            ("浦东新区", "pdxq", "张江 陆家嘴 金桥 世纪公园"),
            ("徐汇区", "xhq", "漕河泾 徐家汇"),
            ("闵行区", "mhq", "莘庄 虹桥"),
            ("杨浦区", "ypq", "五角场 新江湾城"),
            ("长宁区", "cnq", "中山公园 天山"),
            ("静安区", "jaq", "南京西路 大宁"),
        ),
    ),
    City(
        "广州",
        "guangzhou",
        23.13,
        113.26,
        _d(
            ("天河区", "thq", "珠江新城 天河北 车陂 岗顶"),
            ("海珠区", "hzq", "琶洲 客村"),
            ("番禺区", "pyq", "大学城 市桥"),
            ("黄埔区", "hpq", "科学城 萝岗"),
            ("越秀区", "yxq", "东山口 北京路"),
        ),
    ),
    City(
        "深圳",
        "shenzhen",
        22.54,
        114.06,
        _d(
            ("南山区", "nsq", "科技园 粤海 西丽 后海"),
            ("福田区", "ftq", "车公庙 华强北 香蜜湖"),
            ("宝安区", "baq", "西乡 新安 福永"),
            ("龙岗区", "lgq", "坂田 布吉"),
            ("龙华区", "lhq", "民治 龙华"),
        ),
    ),
    City(
        "杭州",
        "hangzhou",
        30.27,
        120.15,
        _d(
            ("西湖区", "xhq", "文三路 古荡 西溪"),
            ("余杭区", "yhq", "未来科技城 仓前 五常"),
            ("滨江区", "bjq", "长河 西兴 浦沿"),
            ("拱墅区", "gsq", "大关 运河"),
            ("上城区", "scq", "钱江新城 四季青"),
        ),
    ),
    City(
        "成都",
        "chengdu",
        30.57,
        104.07,
        _d(
            ("武侯区", "whq", "高新 桐梓林"),
            ("双流区", "slq", "华阳 航空港"),
            ("锦江区", "jjq", "春熙路 东大街"),
            ("成华区", "chq", "建设路 猛追湾"),
        ),
    ),
    City(
        "武汉",
        "wuhan",
        30.59,
        114.31,
        _d(("洪山区", "hsq", "光谷 街道口"), ("江汉区", "jhq", "王家墩 新华路"), ("武昌区", "wcq", "中南路 徐东")),
    ),
    City(
        "南京",
        "nanjing",
        32.06,
        118.80,
        _d(
            ("江宁区", "jnq", "东山 百家湖"),
            ("鼓楼区", "glq", "湖南路 新街口"),
            ("雨花台区", "yhtq", "软件大道 安德门"),
            ("建邺区", "jyq", "河西 奥体"),
        ),
    ),
    City(
        "苏州",
        "suzhou",
        31.30,
        120.58,
        _d(("工业园区", "gyyq", "独墅湖 金鸡湖"), ("虎丘区", "hqq", "狮山 科技城"), ("吴中区", "wzq", "木渎 郭巷")),
    ),
    City(
        "天津",
        "tianjin",
        39.08,
        117.20,
        _d(
            ("滨海新区", "bhxq", "开发区 于家堡"),
            ("南开区", "nkq", "鞍山西道 长虹公园"),
            ("和平区", "hpq", "小白楼 南京路"),
        ),
    ),
    City(
        "重庆",
        "chongqing",
        29.56,
        106.55,
        _d(
            ("渝北区", "ybq", "照母山 大竹林"),
            ("九龙坡区", "jlpq", "杨家坪 石桥铺"),
            ("江北区", "jbq", "观音桥 北滨路"),
        ),
    ),
    City(
        "西安",
        "xian",
        34.34,
        108.94,
        _d(("雁塔区", "ytq", "高新路 小寨"), ("长安区", "caq", "郭杜 韦曲"), ("未央区", "wyq", "经开区 张家堡")),
    ),
    City(
        "佛山",
        "foshan",
        23.02,
        113.12,
        _d(("南海区", "nhq", "桂城 千灯湖"), ("顺德区", "sdq", "大良 容桂"), ("禅城区", "ccq", "祖庙 季华")),
    ),
)

_BY_NAME = {c.name: c for c in CITIES}
# Nationwide searches draw their postings from these cities.
LOCAL_CITIES = tuple(c for c in CITIES if c.districts)
_BY_CODE: dict = {}  # site name -> (its record, {code: City}), made again when its record is replaced


def city_for(site, code):
    """The City a site's city code stands for, or None when the sandbox does not know the code: the first
    name of the site's map (farm.sites) with that code that names a city here."""
    record = get(site)
    made = _BY_CODE.get(site)
    if made is None or made[0] is not record:
        known: dict[str, City] = {}
        for name, named in record.cities.items():
            if name in _BY_NAME:
                known.setdefault(named, _BY_NAME[name])
        made = _BY_CODE[site] = (record, known)
    return made[1].get(code)


def city_named(name):
    """The City of a name such as 北京, or None."""
    return _BY_NAME.get(name)
