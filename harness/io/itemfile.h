/* itemfile.h — the file name of a matrix item inside a bundle directory: the item name with
 * every '/' replaced by "__", plus ".safetensors" ("golden/g1" -> "golden__g1.safetensors").
 * Operand, output and capture directories all use it (contracts §7). */
#ifndef A4W4_ITEMFILE_H
#define A4W4_ITEMFILE_H

#include <stddef.h>

/* Write the file name of item `name` into buf. 0, or -1 when name is empty or buf too short. */
int a4w4_item_file_name(const char *name, char *buf, size_t len);

/* dir + "/" + the file name of `name`. 0, or -1 as above or when the path does not fit. */
int a4w4_item_path(const char *dir, const char *name, char *buf, size_t len);

#endif
