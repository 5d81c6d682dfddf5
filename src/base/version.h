/* version.h - tfgb's version, as the Makefile passes it (config.mk VERSION). */
#ifndef TFGB_VERSION_H
#define TFGB_VERSION_H

#ifndef TFGB_VERSION
#define TFGB_VERSION "unknown"
#endif

#endif
