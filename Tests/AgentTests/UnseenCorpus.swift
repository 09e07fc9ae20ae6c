/// Requests for the ten unseen third-party-style plugins (Tests/SkillHostTests/Fixtures/unseen), written before the
/// offline router was changed for them (issue #64), by someone who had not read the router.
enum UnseenCorpus {
    /// The fixture files, without `.c`.
    static let plugins = [
        "recipes", "colours", "roman", "loans", "tipjar", "shopping", "habits", "expenses", "passgen", "ipcalc",
    ]

    static let cases: [RouterCorpus.Case] = [
        // plugin: recipes (recipe-tools: scale_recipe, cups_to_grams, oven_gas_mark)
        RouterCorpus.call(
            "i have a recipe for 4 people that needs 300g pasta how much do i need for 6", "scale_recipe",
            #"{"quantity":300,"unit":"g","original_servings":4,"desired_servings":6}"#),
        RouterCorpus.call(
            "recipie serves 2 but im cooking for 5 and it says 3 eggs", "scale_recipe",
            #"{"quantity":3,"unit":"eggs","original_servings":2,"desired_servings":5}"#),
        RouterCorpus.call(
            "i want to halve a recipe for 8 that uses 2 cups of milk", "scale_recipe",
            #"{"quantity":2,"unit":"cups","original_servings":8,"desired_servings":4}"#),
        RouterCorpus.call(
            "how many grams is two and a half cups of flour", "cups_to_grams", #"{"ingredient":"flour","cups":2.5}"#),
        RouterCorpus.call("half a cup of butter in grams", "cups_to_grams", #"{"ingredient":"butter","cups":0.5}"#),
        RouterCorpus.call("whats gas mark six in farenheit", "oven_gas_mark", #"{"gas_mark":6}"#),
        RouterCorpus.none("how many calories are in a cup of rice"),
        RouterCorpus.none("what gas mark is 350 fahrenheit"),

        // plugin: colours (colorkit: hex2rgb, rgb2hex, contrast_ratio)
        RouterCorpus.call("whats #ff5733 in rgb", "hex2rgb", ##"{"hex":"#ff5733"}"##),
        RouterCorpus.either(
            "convert hex 00ff7f to rgb values",
            [("hex2rgb", #"{"hex":"00ff7f"}"#), ("hex2rgb", ##"{"hex":"#00ff7f"}"##)]),
        RouterCorpus.call("rgb 255 165 0 as a hex code", "rgb2hex", #"{"r":255,"g":165,"b":0}"#),
        RouterCorpus.call("whats the hex for red 18 green 52 blue 86", "rgb2hex", #"{"r":18,"g":52,"b":86}"#),
        RouterCorpus.either(
            "is grey #777777 text on a white background readable enough",
            [
                ("contrast_ratio", ##"{"foreground":"#777777","background":"#ffffff"}"##),
                ("contrast_ratio", ##"{"foreground":"#777777","background":"#fff"}"##),
            ]),
        RouterCorpus.either(
            "contrast ratio between #333 and #f5f5f5",
            [
                ("contrast_ratio", ##"{"foreground":"#333","background":"#f5f5f5"}"##),
                ("contrast_ratio", ##"{"foreground":"#f5f5f5","background":"#333"}"##),
            ]),
        RouterCorpus.none("what colour do you get if you mix blue and yellow paint"),
        RouterCorpus.none("convert rgb 255 0 0 to cmyk"),

        // plugin: roman (to_roman, from_roman)
        RouterCorpus.call("what is 1994 in roman numerals", "to_roman", #"{"number":1994}"#),
        RouterCorpus.call("how do u write 2026 in roman numerals", "to_roman", #"{"number":2026}"#),
        RouterCorpus.call("roman numeral for forty two", "to_roman", #"{"number":42}"#),
        RouterCorpus.call("MCMLXXXIV in normal numbers", "from_roman", #"{"numeral":"MCMLXXXIV"}"#),
        RouterCorpus.either(
            "what year is mmxv", [("from_roman", #"{"numeral":"mmxv"}"#), ("from_roman", #"{"numeral":"MMXV"}"#)]),
        RouterCorpus.call("the clock face says XIV what number is that", "from_roman", #"{"numeral":"XIV"}"#),
        RouterCorpus.none("how do you write 12 in greek numerals"),
        RouterCorpus.none("convert 101101 from binary to decimal"),

        // plugin: loans (loan-calc: loan_payment, loan_balance, loan_affordable)
        RouterCorpus.call(
            "monthly payment on a 250000 mortage at 4.5% over 25 years", "loan_payment",
            #"{"principal":250000,"annual_rate":4.5,"years":25}"#),
        RouterCorpus.call(
            "if i borrow 15k for a car at 7 percent for 5 years whats the payment", "loan_payment",
            #"{"principal":15000,"annual_rate":7,"years":5}"#),
        RouterCorpus.call(
            "how much interest would i pay in total on a 300000 loan at 6% for 30 years", "loan_payment",
            #"{"principal":300000,"annual_rate":6,"years":30}"#),
        RouterCorpus.call(
            "weekly repayments on 20000 borrowed at 5% over three years", "loan_payment",
            #"{"principal":20000,"annual_rate":5,"years":3,"payments_per_year":52}"#),
        RouterCorpus.call(
            "i took a 200k mortgage at 6% for 30 yrs and have made 60 payments how much do i still owe", "loan_balance",
            #"{"principal":200000,"annual_rate":6,"years":30,"payments_made":60}"#),
        RouterCorpus.call(
            "how big a mortgage can i afford if i can pay 1500 a month at 5.5% over 30 years", "loan_affordable",
            #"{"monthly_payment":1500,"annual_rate":5.5,"years":30}"#),
        RouterCorpus.none("what is the current mortgage rate at my bank"),
        RouterCorpus.none("is there a penalty for paying off my mortgage early"),

        // plugin: tipjar (tipcalc, splitbill)
        RouterCorpus.either(
            "whats an 18% tip on $52",
            [
                ("tipcalc", #"{"bill":52,"percent":18}"#),
                ("calculator", #"{"expression":"18/100*52"}"#),
                ("calculator", #"{"expression":"52*18/100"}"#),
                ("calculator", #"{"expression":"0.18*52"}"#),
                ("calculator", #"{"expression":"52*0.18"}"#),
            ]),
        RouterCorpus.call(
            "the bill is 84.50 we are 3 people and want to leave 20 percent how much each", "tipcalc",
            #"{"bill":84.5,"percent":20,"people":3}"#),
        RouterCorpus.call("how much should i tip on 60 bucks", "tipcalc", #"{"bill":60}"#),
        RouterCorpus.call(
            "dinner came to 137 split four ways with a 15% tip rounded up", "tipcalc",
            #"{"bill":137,"percent":15,"people":4,"round_up":true}"#),
        RouterCorpus.either(
            "split 96 dollars between 5 friends",
            [("splitbill", #"{"total":96,"people":5}"#), ("calculator", #"{"expression":"96/5"}"#)]),
        RouterCorpus.either(
            "we owe 250 for the cabin and there are 6 of us, what does everyone pay",
            [("splitbill", #"{"total":250,"people":6}"#), ("calculator", #"{"expression":"250/6"}"#)]),
        RouterCorpus.none("how much should i tip a hairdresser in japan"),
        RouterCorpus.none("how much is a 50 euro restaurant bill in dollars"),

        // plugin: shopping (shopping-list: shop_add, shop_remove, shop_check_off, shop_list, shop_clear)
        RouterCorpus.change("add eggs to my shopping list", "shop_add", #"{"item":"eggs"}"#),
        RouterCorpus.change("put 6 apples on the shoping list", "shop_add", #"{"item":"apples","quantity":6}"#),
        RouterCorpus.change("take bread off the shopping list", "shop_remove", #"{"item":"bread"}"#),
        RouterCorpus.change(
            "tick bananas off my shopping list i got them", "shop_check_off", #"{"item":"bananas"}"#),
        RouterCorpus.change("clear my whole shopping list", "shop_clear", #"{}"#),
        RouterCorpus.change(
            "remove everything i already bought from the shopping list", "shop_clear", #"{"only_bought":true}"#),
        RouterCorpus.call("whats on my shopping list", "shop_list", #"{}"#),
        RouterCorpus.call("do i still need to buy coffee or is it not on my list", "shop_list", #"{}"#),
        RouterCorpus.none("where is the cheapest place to buy eggs near me"),

        // plugin: habits (habitual: log_habit, habit_streak, list_habits, delete_habit)
        RouterCorpus.change("check in meditation for today", "log_habit", #"{"habit":"meditation"}"#),
        RouterCorpus.change(
            "mark yoga as done for nov 30 2026", "log_habit", #"{"habit":"yoga","date":"2026-11-30"}"#),
        RouterCorpus.change("delete the flossing habit", "delete_habit", #"{"habit":"flossing"}"#),
        RouterCorpus.change(
            "stop tracking the habit reading and wipe its history", "delete_habit", #"{"habit":"reading"}"#),
        RouterCorpus.call("whats my meditation streak", "habit_streak", #"{"habit":"meditation"}"#),
        RouterCorpus.call("how many days in a row have i kept up running", "habit_streak", #"{"habit":"running"}"#),
        RouterCorpus.call("show me all the habits im tracking", "list_habits", #"{}"#),
        RouterCorpus.none("remind me to drink water every 2 hours"),
        RouterCorpus.none("set a goal of 10000 steps a day"),

        // plugin: expenses (spendlog: expense_add, expense_total, expense_list, expense_delete)
        RouterCorpus.change(
            "spent 12.50 on lunch, log it under food", "expense_add",
            #"{"amount":12.5,"category":"food","note":"lunch"}"#),
        RouterCorpus.change("record 1200 for rent", "expense_add", #"{"amount":1200,"category":"rent"}"#),
        RouterCorpus.change("log a 30 dollar expense", "expense_add", #"{"amount":30}"#),
        RouterCorpus.change("delete expense 7", "expense_delete", #"{"id":7}"#),
        RouterCorpus.change(
            "remove expense number 3 i entered it twice", "expense_delete", #"{"id":3}"#),
        RouterCorpus.call("how much have i spent on food", "expense_total", #"{"category":"food"}"#),
        RouterCorpus.call("whats my total spending so far", "expense_total", #"{}"#),
        RouterCorpus.call("show my last 5 expenses", "expense_list", #"{"limit":5}"#),
        RouterCorpus.none("set a monthly budget of 500 for fun stuff"),
        RouterCorpus.none("export my expenses to a spreadsheet"),

        // plugin: passgen (generate_password, generate_passphrase, password_strength)
        RouterCorpus.call("generate a password", "generate_password", #"{}"#),
        RouterCorpus.call(
            "i need a twenty four character pasword without symbols", "generate_password",
            #"{"length":24,"symbols":false}"#),
        RouterCorpus.call(
            "make me a random pw 12 chars letters only", "generate_password",
            #"{"length":12,"digits":false,"symbols":false}"#),
        RouterCorpus.call("give me a passphrase of six words", "generate_passphrase", #"{"words":6}"#),
        RouterCorpus.call(
            "memorable password made of words separated by dots", "generate_passphrase", #"{"separator":"."}"#),
        RouterCorpus.call("is hunter2 a strong password", "password_strength", #"{"password":"hunter2"}"#),
        RouterCorpus.none("has my email been in a data breach"),
        RouterCorpus.none("generate a 4 digit pin for my card"),

        // plugin: ipcalc (subnet_info, ip_in_subnet, prefix_to_netmask)
        RouterCorpus.call("subnet info for 192.168.1.0/24", "subnet_info", #"{"cidr":"192.168.1.0/24"}"#),
        RouterCorpus.call("broadcast address of 10.20.30.40/27", "subnet_info", #"{"cidr":"10.20.30.40/27"}"#),
        RouterCorpus.call(
            "how many usable hosts in 172.16.0.0/22", "subnet_info", #"{"cidr":"172.16.0.0/22"}"#),
        RouterCorpus.call(
            "is 10.1.2.3 inside 10.0.0.0/8", "ip_in_subnet", #"{"ip":"10.1.2.3","cidr":"10.0.0.0/8"}"#),
        RouterCorpus.call(
            "does 192.168.2.5 belong to the 192.168.1.0/24 network", "ip_in_subnet",
            #"{"ip":"192.168.2.5","cidr":"192.168.1.0/24"}"#),
        RouterCorpus.call("what netmask is a /26", "prefix_to_netmask", #"{"prefix":26}"#),
        RouterCorpus.none("whats my public ip address"),
        RouterCorpus.none("expand the ipv6 address 2001:db8::1"),
    ]

    /// Request forms against the bundled skills only (calculator, units, clock, text, notes): a field a skill does
    /// not have, a time given in another zone, percentages, compound quantities, rounding and dates.
    static let heldOutForms: [RouterCorpus.Case] = [
        // A field the notes do not have (they have a title and a body): nothing may change.
        RouterCorpus.none("update note 2 description to 'buy milk'"),
        RouterCorpus.none("set the priority of note 3 to high"),
        RouterCorpus.none("change the due date on note 5 to friday"),
        RouterCorpus.none("tag note 1 as work"),
        RouterCorpus.none("make note 4 yellow"),
        // The fields they do have.
        RouterCorpus.change(
            "change the title of note 2 to groceries", "notes_update", #"{"id":2,"title":"groceries"}"#),
        RouterCorpus.change(
            "update note 3 body to call the plumber tomorrow", "notes_update",
            #"{"id":3,"body":"call the plumber tomorrow"}"#),

        // A time given in another zone than the caller's.
        RouterCorpus.call(
            "what time is it in Tokyo when it's 3pm in Paris", "clock_convert",
            #"{"time":"15:00","from":"Europe/Paris","to":"Asia/Tokyo"}"#),
        RouterCorpus.call(
            "if its 9am in new york what time is it in london", "clock_convert",
            #"{"time":"09:00","from":"America/New_York","to":"Europe/London"}"#),
        RouterCorpus.call(
            "my call is at 14:30 berlin time whats that in los angeles", "clock_convert",
            #"{"time":"14:30","from":"Europe/Berlin","to":"America/Los_Angeles"}"#),
        RouterCorpus.call(
            "8pm sydney time in new york time", "clock_convert",
            #"{"time":"20:00","from":"Australia/Sydney","to":"America/New_York"}"#),
        RouterCorpus.call(
            "when it is noon in london what time is it in mumbai", "clock_convert",
            #"{"time":"12:00","from":"Europe/London","to":"Asia/Kolkata"}"#),
        RouterCorpus.call(
            "9:30am on christmas eve 2026 in tokyo, what time is that in chicago", "clock_convert",
            #"{"time":"2026-12-24T09:30","from":"Asia/Tokyo","to":"America/Chicago"}"#),

        // Percentages of an amount (the calculator's % is the remainder, so a percentage is written /100).
        RouterCorpus.either(
            "15% of 60",
            [
                ("calculator", #"{"expression":"15/100*60"}"#), ("calculator", #"{"expression":"60*15/100"}"#),
                ("calculator", #"{"expression":"15*60/100"}"#), ("calculator", #"{"expression":"0.15*60"}"#),
                ("calculator", #"{"expression":"60*0.15"}"#),
            ]),
        RouterCorpus.either(
            "what's an 18% tip on $52",
            [
                ("calculator", #"{"expression":"18/100*52"}"#), ("calculator", #"{"expression":"52*18/100"}"#),
                ("calculator", #"{"expression":"18*52/100"}"#), ("calculator", #"{"expression":"0.18*52"}"#),
                ("calculator", #"{"expression":"52*0.18"}"#),
            ]),
        RouterCorpus.either(
            "what is 7.5 percent of 240",
            [
                ("calculator", #"{"expression":"7.5/100*240"}"#), ("calculator", #"{"expression":"240*7.5/100"}"#),
                ("calculator", #"{"expression":"7.5*240/100"}"#), ("calculator", #"{"expression":"0.075*240"}"#),
                ("calculator", #"{"expression":"240*0.075"}"#),
            ]),
        RouterCorpus.either(
            "what percentage of 180 is 45",
            [
                ("calculator", #"{"expression":"45/180*100"}"#), ("calculator", #"{"expression":"45*100/180"}"#),
                ("calculator", #"{"expression":"100*45/180"}"#),
            ]),
        RouterCorpus.either(
            "how much is 20% off 80 dollars",
            [
                ("calculator", #"{"expression":"80-80*20/100"}"#), ("calculator", #"{"expression":"80-20/100*80"}"#),
                ("calculator", #"{"expression":"80*(1-20/100)"}"#),
                ("calculator", #"{"expression":"80*(100-20)/100"}"#),
                ("calculator", #"{"expression":"80*0.8"}"#), ("calculator", #"{"expression":"80-80*0.2"}"#),
            ]),
        RouterCorpus.either(
            "add 8% sales tax to 45",
            [
                ("calculator", #"{"expression":"45+45*8/100"}"#), ("calculator", #"{"expression":"45+8/100*45"}"#),
                ("calculator", #"{"expression":"45*(1+8/100)"}"#), ("calculator", #"{"expression":"45*1.08"}"#),
                ("calculator", #"{"expression":"45+45*0.08"}"#),
            ]),

        // Compound quantities.
        RouterCorpus.either(
            "6 feet 2 inches in cm",
            [
                ("convert_length", #"{"value":74,"from":"in","to":"cm"}"#),
                ("calculator", #"{"expression":"(6*12+2)*2.54"}"#),
                ("calculator", #"{"expression":"6*30.48+2*2.54"}"#),
            ]),
        RouterCorpus.either(
            "3 lb 4 oz in kg",
            [
                ("convert_mass", #"{"value":52,"from":"oz","to":"kg"}"#),
                ("convert_mass", #"{"value":3.25,"from":"lb","to":"kg"}"#),
            ]),
        RouterCorpus.either(
            "how tall is 5 ft 11 in in meters",
            [
                ("convert_length", #"{"value":71,"from":"in","to":"m"}"#),
                ("calculator", #"{"expression":"(5*12+11)*0.0254"}"#),
            ]),
        RouterCorpus.call(
            "1 mile and 200 yards in km", "convert_length", #"{"value":1960,"from":"yd","to":"km"}"#),
        RouterCorpus.either(
            "2 kg 300 g in pounds",
            [
                ("convert_mass", #"{"value":2.3,"from":"kg","to":"lb"}"#),
                ("convert_mass", #"{"value":2300,"from":"g","to":"lb"}"#),
            ]),

        // Rounding: the calculator has no round(); the careful call computes the value, the answer rounds it.
        RouterCorpus.call("22/7 rounded to 3 decimal places", "calculator", #"{"expression":"22/7"}"#),
        RouterCorpus.either(
            "square root of 2 to 4 decimals",
            [("calculator", #"{"expression":"sqrt(2)"}"#), ("calculator", #"{"expression":"2^0.5"}"#)]),
        RouterCorpus.call(
            "100 divided by 7 rounded to the nearest whole number", "calculator", #"{"expression":"100/7"}"#),

        // Dates.
        RouterCorpus.call("what day of the week was 4 july 1976", "clock_weekday", #"{"date":"1976-07-04"}"#),
        RouterCorpus.call("what day does christmas 2027 fall on", "clock_weekday", #"{"date":"2027-12-25"}"#),
        RouterCorpus.call("which weekday is 31/12/2026", "clock_weekday", #"{"date":"2026-12-31"}"#),
        RouterCorpus.call("whats todays date", "clock_now", #"{}"#),
        RouterCorpus.none("how many days until christmas"),
        RouterCorpus.none("what's the date 90 days from today"),
    ]
}
