/*
 * search_path.h
 *		Refusing a search_path in which an untrusted role could plant a
 *		function that captures a call to caio (search_path.c).
 */
#ifndef CAIO_SEARCH_PATH_H
#define CAIO_SEARCH_PATH_H

extern void caio_require_trusted_search_path(const char *function);
extern void caio_require_trusted_search_path_for_superuser(const char *function);

#endif							/* CAIO_SEARCH_PATH_H */
