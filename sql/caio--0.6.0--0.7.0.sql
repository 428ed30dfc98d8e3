-- caio 0.6.0 to 0.7.0: the fourth review's fixes (issue 33).

\echo Use "ALTER EXTENSION caio UPDATE TO '0.7.0'" to load this file. \quit

-- Each change below has a section of its own, in the order of the install
-- script (sql/caio.sql), and qualifies every function and operator that is
-- not caio's own.
