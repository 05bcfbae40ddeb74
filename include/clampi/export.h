/* The one export macro: what clampi's libraries make visible (everything else is
 * hidden: the libraries are built with -fvisibility=hidden). */
#ifndef CLAMPI_EXPORT_H
#define CLAMPI_EXPORT_H
#ifndef CLAMPI_API
#if defined(__GNUC__)
#define CLAMPI_API __attribute__((visibility("default")))
#else
#define CLAMPI_API
#endif
#endif
#endif
