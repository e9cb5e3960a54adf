"""Word lists the generated postings are made of.

A posting picks a level once (of experience, degree, its company's size, kind and industry) and each site
words it its own way (its imitation's words, farm.sandbox.imitation). The tables of levels here are the
words of a site that gives none of its own, and say how many levels there are.
"""

COMPANY_POOL = 600

NAME_CHARS = "智云星辰数联科创海瑞华博信达恒泰鼎盛优捷易讯锐微蓝图维新德安悦启航远凯明睿禾嘉诚拓"
# (its name on a site that gives none, its word in a company's full name)
INDUSTRIES = (
    ("互联网", "网络科技"),
    ("计算机软件", "软件"),
    ("IT服务", "信息技术"),
    ("电子商务", "电子商务"),
    ("人工智能", "智能科技"),
    ("半导体/芯片", "微电子"),
    ("教育/培训", "教育科技"),
    ("医疗健康", "医疗科技"),
    ("金融", "金融信息服务"),
    ("游戏", "互动娱乐"),
    ("贸易", "贸易"),
    ("咨询", "企业管理咨询"),
)
STAGES = ("未融资", "天使轮", "A轮", "B轮", "C轮", "D轮及以上", "已上市", "不需要融资", "")
SIZES = ("20人以下", "20-99人", "100-499人", "500-999人", "1000-9999人", "10000人以上")
KINDS = ("民营", "民营", "上市公司", "外资", "外资", "国企", "合资")  # 民营 twice: drawn twice as often
EXPERIENCE = ("经验不限", "应届生", "1年以内", "1-3年", "3-5年", "5-10年", "10年以上")
SALARY_BASE = (6000, 3500, 6000, 9000, 14000, 20000, 30000)  # a month's pay around which each experience is paid
DEGREE = ("学历不限", "大专", "本科", "硕士", "博士", "高中", "中专")
WELFARE = (
    "五险一金",
    "带薪年假",
    "年终奖",
    "餐补",
    "交通补助",
    "定期体检",
    "弹性工作",
    "员工旅游",
    "节日福利",
    "包吃",
    "包住",
    "团建聚餐",
    "意外险",
    "股票期权",
    "免费班车",
    "下午茶",
)
TECH_SKILLS = (
    "Linux",
    "MySQL",
    "Redis",
    "Docker",
    "Git",
    "Kubernetes",
    "Spring",
    "Django",
    "微服务",
    "分布式",
    "数据分析",
    "机器学习",
    "算法",
    "Vue",
    "React",
    "Go",
    "C++",
    "Kafka",
    "Hadoop",
)
SOFT_SKILLS = ("沟通能力", "团队合作", "Office", "数据统计", "客户维护", "执行力", "抗压能力", "英语")
TECH_TITLES = (
    "{kw}开发工程师",
    "高级{kw}开发工程师",
    "{kw}工程师",
    "资深{kw}工程师",
    "{kw}后端开发",
    "{kw}实习生",
    "{kw}软件工程师",
    "{kw}技术专家",
    "中级{kw}开发",
    "{kw}开发（双休）",
    "{kw}架构师",
    "初级{kw}工程师",
    "{kw}讲师",
    "{kw}测试工程师",
)
PLAIN_TITLES = (
    "{kw}",
    "{kw}专员",
    "高级{kw}",
    "{kw}主管",
    "{kw}经理",
    "{kw}助理",
    "{kw}实习生",
    "资深{kw}",
    "{kw}（五险一金）",
    "{kw}储备干部",
    "{kw}组长",
)
SHARED_TITLES = (
    "软件工程师",
    "储备干部",
    "管培生",
    "技术支持工程师",
    "项目经理",
    "产品经理",
    "数据分析师",
    "运维工程师",
    "客服专员",
    "销售代表",
    "行政助理",
    "实施工程师",
)
SURNAMES = "王李张刘陈杨黄赵周吴徐孙马朱胡郭何林罗高"
GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰涛明超秀霞平刚桂英华玲"
HR_TITLES = ("招聘者", "HR", "人事经理", "招聘经理", "技术总监", "HRBP", "人力资源专员")
