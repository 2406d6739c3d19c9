//! The questions of the ladder's chapters (one Redis, `none` … `atomic-deduct`, `redis-down`).

use super::{fig, oversold_few, oversold_many, oversold_none, Choice, Question};

pub(super) static QUESTIONS: &[Question] = &[
    Question {
        chapter: "none-race",
        en: "No lock at all: 300 buyers at once for 100 items. How many items are sold beyond \
             the stock?",
        zh: "完全不加锁：300 个买家同时抢 100 件商品。卖出的数量会超出库存多少？",
        options: &[
            Choice {
                en: "None: the stock counter keeps them honest",
                zh: "一件也不会：库存计数能挡住",
                holds: oversold_none,
            },
            Choice {
                en: "A few: at most a tenth of the stock",
                zh: "少量：不超过库存的十分之一",
                holds: oversold_few,
            },
            Choice {
                en: "Many: more than a tenth of the stock",
                zh: "大量：超过库存的十分之一",
                holds: oversold_many,
            },
        ],
    },
    Question {
        chapter: "local-one-instance",
        en: "A mutex inside the process, and a single instance serves every buyer. How many \
             items are oversold?",
        zh: "进程内的本地锁，只有一个实例处理全部买家。会超卖多少？",
        options: &[
            Choice {
                en: "None",
                zh: "一件也不会",
                holds: oversold_none,
            },
            Choice {
                en: "A few: at most a tenth of the stock",
                zh: "少量：不超过库存的十分之一",
                holds: oversold_few,
            },
            Choice {
                en: "Many: more than a tenth of the stock",
                zh: "大量：超过库存的十分之一",
                holds: oversold_many,
            },
        ],
    },
    Question {
        chapter: "local-three-instances",
        en: "The same in-process mutex, but nginx spreads the buyers over three instances. How \
             many items are oversold?",
        zh: "同样的本地锁，但 nginx 把买家分发到三个实例。会超卖多少？",
        options: &[
            Choice {
                en: "None: each sale still holds a lock",
                zh: "一件也不会：每次销售都加了锁",
                holds: oversold_none,
            },
            Choice {
                en: "A few: at most a tenth of the stock",
                zh: "少量：不超过库存的十分之一",
                holds: oversold_few,
            },
            Choice {
                en: "Many: more than a tenth of the stock",
                zh: "大量：超过库存的十分之一",
                holds: oversold_many,
            },
        ],
    },
    Question {
        chapter: "setnx-crash",
        en: "SETNX, then the holder's process crashes inside the critical section. What do the \
             other buyers get?",
        zh: "用 SETNX 加锁，持锁进程在临界区里崩溃。其他买家会怎样？",
        options: &[
            Choice {
                en: "They buy as if nothing happened: nobody waits long",
                zh: "照常买到，几乎没人需要等",
                holds: |f| fig(f, "orders") > 0.0 && fig(f, "max_latency_ms") < 800.0,
            },
            Choice {
                en: "They wait a while, then sales resume by themselves",
                zh: "等一会儿，然后销售自行恢复",
                holds: |f| fig(f, "orders") > 0.0 && fig(f, "max_latency_ms") >= 800.0,
            },
            Choice {
                en: "Nothing is sold: they wait until they give up",
                zh: "一件也卖不出去：大家一直等到放弃",
                holds: |f| fig(f, "orders") == 0.0,
            },
        ],
    },
    Question {
        chapter: "redis-down",
        en: "The one Redis that holds the locks dies as the sale starts and is back 8 s later. \
             The buyers wait at most 2 s. What happens?",
        zh: "存放锁的唯一一个 Redis 在开卖时宕机，8 秒后才回来；买家最多等 2 秒。会发生什么？",
        options: &[
            Choice {
                en: "Sales go on without the lock, and some items are oversold",
                zh: "没有锁照样卖，有商品超卖",
                holds: |f| fig(f, "orders") > 0.0 && fig(f, "oversold") > 0.0,
            },
            Choice {
                en: "Buyers wait until Redis is back, then all are sold",
                zh: "买家一直等到 Redis 回来，然后都买到了",
                holds: |f| fig(f, "orders") > 0.0 && fig(f, "oversold") == 0.0,
            },
            Choice {
                en: "Every buyer is refused (503) and nothing is sold",
                zh: "每个买家都被拒绝（503），一件也没卖出",
                holds: |f| fig(f, "orders") == 0.0,
            },
        ],
    },
];
