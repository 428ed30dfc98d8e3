-- caio 0.5.0 -> 0.6.0
\echo Use "ALTER EXTENSION caio UPDATE TO '0.6.0'" to load this file. \quit
