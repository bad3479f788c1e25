"""The sample dataset's questions: each with its database, difficulty, evidence and gold SQL
(``QUESTIONS``), and the SQL the tests' scripted model submits for each (``SAMPLE_ANSWERS``:
some right, some wrong in the ways execution accuracy must tell apart). The databases they
ask about are ``sample_content``'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

_SHOP_SPEND = (
    "FROM orders o JOIN customers c ON c.id = o.customer_id JOIN products p ON p.id = o.product_id"
)
_GRADES = "FROM enrollments e JOIN courses c ON c.id = e.course_id"
# (question_id, db_id, difficulty, question, evidence, gold SQL)
QUESTIONS: Sequence[tuple[int, str, str, str, str, str]] = (
    (
        0,
        "shop",
        "simple",
        "How many customers live in Lisbon?",
        "live in Lisbon refers to city = 'Lisbon'",
        "SELECT COUNT(*) FROM customers WHERE city = 'Lisbon'",
    ),
    (
        1,
        "shop",
        "simple",
        "List the names of the products in the kitchen category.",
        "kitchen category refers to category = 'kitchen'",
        "SELECT name FROM products WHERE category = 'kitchen'",
    ),
    (
        2,
        "shop",
        "simple",
        "What is the price of the most expensive product?",
        "most expensive refers to MAX(price)",
        "SELECT MAX(price) FROM products",
    ),
    (
        3,
        "shop",
        "simple",
        "Which customers have no city recorded?",
        "no city recorded refers to city IS NULL",
        "SELECT name FROM customers WHERE city IS NULL",
    ),
    (
        4,
        "shop",
        "moderate",
        "How many Pens were ordered in total?",
        "Pen refers to products.name = 'Pen'; in total refers to SUM(quantity)",
        "SELECT SUM(o.quantity) FROM orders o JOIN products p ON p.id = o.product_id "
        "WHERE p.name = 'Pen'",
    ),
    (
        5,
        "shop",
        "moderate",
        "In which cities do the customers who ordered a Kettle live?",
        "Kettle refers to products.name = 'Kettle'",
        f"SELECT DISTINCT c.city {_SHOP_SPEND} WHERE p.name = 'Kettle'",
    ),
    (
        6,
        "shop",
        "moderate",
        "How much did Ana spend?",
        "spend refers to SUM(price * quantity)",
        f"SELECT SUM(p.price * o.quantity) {_SHOP_SPEND} WHERE c.name = 'Ana'",
    ),
    (
        7,
        "shop",
        "moderate",
        "Which customers ordered something in March 2023?",
        "March 2023 refers to order_date LIKE '2023-03%'",
        f"SELECT DISTINCT c.name {_SHOP_SPEND} WHERE o.order_date LIKE '2023-03%'",
    ),
    (
        8,
        "shop",
        "challenging",
        "Which customer spent the most, and how much?",
        "spent refers to SUM(price * quantity)",
        f"SELECT c.name, SUM(p.price * o.quantity) AS spent {_SHOP_SPEND} "
        "GROUP BY c.id ORDER BY spent DESC LIMIT 1",
    ),
    (
        9,
        "shop",
        "challenging",
        "What percentage of the units ordered is in each category?",
        "percentage = SUM(quantity of the category) * 100.0 / SUM(quantity of all orders)",
        "SELECT p.category, SUM(o.quantity) * 100.0 / (SELECT SUM(quantity) FROM orders) "
        "FROM orders o JOIN products p ON p.id = o.product_id GROUP BY p.category",
    ),
    (
        10,
        "school",
        "simple",
        "How many courses are worth 5 credits?",
        "",
        "SELECT COUNT(*) FROM courses WHERE credits = 5",
    ),
    (
        11,
        "school",
        "simple",
        "What are the names of the first-year students?",
        "first-year refers to year = 1",
        "SELECT name FROM students WHERE year = 1",
    ),
    (
        12,
        "school",
        "simple",
        "Which enrollments have no grade yet? Give the student id and the course id.",
        "no grade refers to grade IS NULL",
        "SELECT student_id, course_id FROM enrollments WHERE grade IS NULL",
    ),
    (
        13,
        "school",
        "moderate",
        "What is the average grade in Databases?",
        "Databases refers to title = 'Databases'",
        f"SELECT AVG(e.grade) {_GRADES} WHERE c.title = 'Databases'",
    ),
    (
        14,
        "school",
        "moderate",
        "How many students take more than one course?",
        "",
        "SELECT COUNT(*) FROM (SELECT student_id FROM enrollments GROUP BY student_id "
        "HAVING COUNT(*) > 1)",
    ),
    (
        15,
        "school",
        "moderate",
        "Which courses does Maria take? Give their titles.",
        "",
        f"SELECT c.title {_GRADES} JOIN students s ON s.id = e.student_id WHERE s.name = 'Maria'",
    ),
    (
        16,
        "school",
        "moderate",
        "Which students have a grade of at least 18 in some course?",
        "at least 18 refers to grade >= 18",
        "SELECT DISTINCT s.name FROM enrollments e JOIN students s ON s.id = e.student_id "
        "WHERE e.grade >= 18",
    ),
    (
        17,
        "school",
        "challenging",
        "Which course has the highest average grade?",
        "average grade ignores enrollments without a grade",
        f"SELECT c.title {_GRADES} GROUP BY c.id ORDER BY AVG(e.grade) DESC LIMIT 1",
    ),
    (
        18,
        "school",
        "challenging",
        "Which students are not enrolled in any course?",
        "",
        "SELECT name FROM students WHERE id NOT IN (SELECT student_id FROM enrollments)",
    ),
    (
        19,
        "flights",
        "simple",
        "How many flights leave from LIS?",
        "leave from LIS refers to origin = 'LIS'",
        "SELECT COUNT(*) FROM flights WHERE origin = 'LIS'",
    ),
    (
        20,
        "flights",
        "simple",
        "What is the longest flight distance in kilometres?",
        "",
        "SELECT MAX(distance_km) FROM flights",
    ),
    (
        21,
        "flights",
        "simple",
        "What are the codes of the airports in Spain?",
        "in Spain refers to country = 'Spain'",
        "SELECT code FROM airports WHERE country = 'Spain'",
    ),
    (
        22,
        "flights",
        "moderate",
        "How long, on average, is a flight to Madrid, in minutes?",
        "to Madrid refers to airports.city = 'Madrid' for the destination",
        "SELECT AVG(f.duration_min) FROM flights f JOIN airports a ON a.code = f.destination "
        "WHERE a.city = 'Madrid'",
    ),
    (
        23,
        "flights",
        "challenging",
        "Between which two cities is the fastest flight, in kilometres per hour?",
        "speed = distance_km / (duration_min / 60.0); give the origin city, then the "
        "destination city",
        "SELECT o.city, d.city FROM flights f JOIN airports o ON o.code = f.origin "
        "JOIN airports d ON d.code = f.destination "
        "ORDER BY f.distance_km / (f.duration_min / 60.0) DESC LIMIT 1",
    ),
)

# question_id -> the SQL the scripted model submits (None: it submits nothing)
SAMPLE_ANSWERS: Mapping[int, str | None] = {
    0: "SELECT COUNT(id) FROM customers WHERE city = 'Lisbon'",  # right, written differently
    1: "SELECT name FROM products WHERE category = 'kitchen' ORDER BY name DESC",  # right
    2: "SELECT price FROM products ORDER BY price DESC LIMIT 1",  # right
    3: "SELECT name FROM customers WHERE city = ''",  # wrong: NULL is not ''
    4: "SELECT SUM(quantity) FROM orders WHERE product_id = 5",  # right
    5: f"SELECT c.city {_SHOP_SPEND} WHERE p.name = 'Kettle'",  # right: duplicate rows
    6: f"SELECT SUM(p.price) {_SHOP_SPEND} WHERE c.name = 'Ana'",  # wrong: no quantity
    7: "SELECT name FROM customer WHERE id = 3",  # wrong: fails (no such table)
    8: f"SELECT c.name {_SHOP_SPEND} GROUP BY c.id "
    "ORDER BY SUM(p.price * o.quantity) DESC LIMIT 1",  # wrong: one column missing
    9: None,  # wrong: nothing submitted
    10: "SELECT COUNT(*) FROM courses WHERE credits = 5",  # right
    11: "SELECT name FROM students WHERE year = 1 ORDER BY id DESC",  # right
    12: "SELECT course_id, student_id FROM enrollments WHERE grade IS NULL",  # wrong: order
    13: f"SELECT SUM(e.grade) / COUNT(e.grade) {_GRADES} WHERE c.title = 'Databases'",  # right
    14: "SELECT COUNT(DISTINCT a.student_id) FROM enrollments a JOIN enrollments b "
    "ON a.student_id = b.student_id AND a.course_id <> b.course_id",  # right
    15: "SELECT title FROM courses WHERE id IN (1, 2)",  # right
    16: "SELECT DISTINCT s.name FROM enrollments e JOIN students s ON s.id = e.student_id "
    "WHERE e.grade > 18",  # wrong: misses the 18
    17: f"SELECT c.title {_GRADES} GROUP BY c.title ORDER BY AVG(e.grade) DESC LIMIT 1",  # right
    18: "SELECT s.name FROM students s LEFT JOIN enrollments e ON e.student_id = s.id "
    "WHERE e.student_id IS NULL",  # right
    19: "SELECT COUNT(*) FROM flights WHERE origin = 'LIS'",  # right
    20: "SELECT distance_km FROM flights ORDER BY distance_km DESC LIMIT 1",  # right
    21: "SELECT code FROM airports WHERE country = 'Spain' ORDER BY code",  # right
    22: "SELECT ROUND(AVG(f.duration_min), 1) FROM flights f JOIN airports a "
    "ON a.code = f.destination WHERE a.city = 'Madrid'",  # wrong: 70.3 is not 70.333...
    23: "SELECT 'Lisbon', 'Paris'",  # right: the same values
}
