"""The content of the sample dataset: its three databases' schemas and rows (see
``sample_data``, which writes them). The questions with their gold SQL, and the answers the
tests' scripted model gives, are ``sample_questions``'s, named here too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rho_entry.evals.sample_questions import QUESTIONS, SAMPLE_ANSWERS

__all__ = ["QUESTIONS", "ROWS", "SAMPLE_ANSWERS", "SCHEMAS"]

SCHEMAS: Mapping[str, str] = {
    "shop": """
        CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
        CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT, category TEXT, price REAL);
        CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers,
            product_id INTEGER REFERENCES products, quantity INTEGER, order_date TEXT);
    """,
    "school": """
        CREATE TABLE students (id INTEGER PRIMARY KEY, name TEXT, year INTEGER);
        CREATE TABLE courses (id INTEGER PRIMARY KEY, title TEXT, credits INTEGER);
        CREATE TABLE enrollments (student_id INTEGER REFERENCES students,
            course_id INTEGER REFERENCES courses, grade REAL);
    """,
    "flights": """
        CREATE TABLE airports (code TEXT PRIMARY KEY, city TEXT, country TEXT);
        CREATE TABLE flights (id INTEGER PRIMARY KEY, origin TEXT REFERENCES airports,
            destination TEXT REFERENCES airports, distance_km REAL, duration_min INTEGER);
    """,
}

ROWS: Mapping[str, Mapping[str, Sequence[tuple[Any, ...]]]] = {
    "shop": {
        "customers": [
            (1, "Ana", "Lisbon"),
            (2, "Ben", "Porto"),
            (3, "Chen", "Lisbon"),
            (4, "Dara", "Faro"),
            (5, "Eli", "Porto"),
            (6, "Fay", None),
        ],
        "products": [
            (1, "Kettle", "kitchen", 24.5),
            (2, "Toaster", "kitchen", 31.0),
            (3, "Lamp", "home", 15.25),
            (4, "Rug", "home", 80.0),
            (5, "Pen", "office", 1.2),
            (6, "Desk", "office", 150.0),
        ],
        "orders": [
            (1, 1, 1, 2, "2023-01-10"),
            (2, 1, 3, 1, "2023-02-11"),
            (3, 2, 2, 1, "2023-02-20"),
            (4, 3, 4, 1, "2023-03-05"),
            (5, 3, 5, 10, "2023-03-06"),
            (6, 2, 5, 5, "2023-04-01"),
            (7, 4, 6, 1, "2023-04-15"),
            (8, 1, 5, 3, "2023-05-02"),
            (9, 5, 1, 1, "2023-05-20"),
            (10, 3, 1, 1, "2023-06-01"),
        ],
    },
    "school": {
        "students": [
            (1, "Maria", 1),
            (2, "Jon", 2),
            (3, "Ines", 1),
            (4, "Paulo", 3),
            (5, "Rita", 2),
        ],
        "courses": [(1, "Databases", 5), (2, "Algebra", 6), (3, "History", 5)],
        "enrollments": [
            (1, 1, 17.0),
            (1, 2, 18.0),
            (2, 1, 12.5),
            (2, 3, None),
            (3, 1, 19.0),
            (4, 2, 14.0),
            (4, 3, 16.0),
        ],
    },
    "flights": {
        "airports": [
            ("LIS", "Lisbon", "Portugal"),
            ("OPO", "Porto", "Portugal"),
            ("MAD", "Madrid", "Spain"),
            ("BCN", "Barcelona", "Spain"),
            ("CDG", "Paris", "France"),
        ],
        "flights": [
            (1, "LIS", "MAD", 512.3, 75),
            (2, "OPO", "MAD", 430.0, 70),
            (3, "LIS", "CDG", 1450.8, 150),
            (4, "BCN", "MAD", 483.1, 66),
            (5, "LIS", "OPO", 274.0, 55),
            (6, "CDG", "BCN", 830.5, 105),
        ],
    },
}
