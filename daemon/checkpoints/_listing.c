/* The full-scan fallback's listing, in C: the same records GNU find prints for walk.py, with
 * fewer system calls.
 *
 * find pays about a dozen system calls per folder (open, fstat, fcntl, getdents, close, and a
 * stat of the folder itself) and formats each record through printf. Here a folder costs an
 * openat, its getdents64 calls and a close; its type comes from the directory entry, so it is
 * never stat'ed. A file costs one fstatat. The GIL is released while the tree is listed, so one
 * Python thread per CPU lists a share of the top-level entries at once.
 *
 * Records, each ended by a NUL byte, in pre-order (a folder's contents right after it):
 *   "d 0 0 0 ./PATH"                                   for a folder
 *   "TYPE SIZE MODE SECONDS.NANOSECONDS0 ./PATH"       for anything else
 * with TYPE one of find's %y letters (f, l, p, s, b, c) and MODE the permission bits in octal,
 * exactly as walk.expected() builds them (one difference: a time before 1970 is printed as "-",
 * where find prints the negative number; expected() never vouches for such a time). Entries
 * named .git, and the folders the caller prunes, are left out with what is beneath them.
 * Nothing is followed: links are listed, not entered.
 *
 * Given a recent time (recent_ns) in a full listing, the record of a non-folder whose inode
 * changed at or after it starts with "+": the stat cache cannot vouch for it, since an agent
 * can set size and mtime back but not the change time. So does every record beneath a folder
 * on another device than its parent (a btrfs or bcachefs subvolume) when a folder above it, up
 * to the root, changed at or after it: a subvolume put in place by a snapshot, or renamed into
 * place (itself or a folder holding it), keeps its files' inode numbers and change times, and
 * its device number may be one a removed subvolume had; only the folders above show the change
 * (see subvolumes.py). Each folder then costs an fstat too.
 *
 * Given a change time (since_ns), only the entries that are not folders and whose inode
 * changed at or after it (st_ctim) are listed: the scope audit's look for writes that no
 * watcher saw (through a hard link made outside the folders it watches). A folder that cannot
 * be opened is then listed as "u 0 0 0 ./PATH" (its files may still be read by name), and one
 * left out by a pruned name ("*\/node_modules") as "n 0 0 0 ./PATH" (a letter find's %y never
 * prints: "p" is a FIFO).
 *
 * A folder's descriptor stays open while its subfolders are listed, so a tree deeper than
 * MAX_DEPTH is not listed here (ELOOP): an agent could otherwise make one deep enough to use up
 * the daemon's descriptors. walk.py then has GNU find list it.
 */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if !defined(__linux__)
#error "the native listing needs Linux's getdents64; walk.py runs GNU find elsewhere"
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define DENTS_SIZE 32768
#define PATH_SIZE 8192
#define MAX_DEPTH 128

struct linux_dirent64 {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

typedef struct {
    char *data;
    size_t len, cap;
} Buffer;

typedef struct {
    Buffer out;
    char path[PATH_SIZE];  /* "./" then the relative path of the folder being listed */
    char **pruned;         /* relative paths of folders left out */
    Py_ssize_t npruned;
    int failed;            /* an errno that makes the whole listing worthless, or 0 */
    int depth;             /* folders open above the one being listed */
    long long since;       /* list only non-folders changed at or after this (ns); -1: all */
    long long recent;      /* mark non-folders changed at or after this (ns) with "+"; -1: none */
    dev_t dev;             /* with recent: the device of the folder being listed */
    long long changed;     /* with recent: the newest change time (ns) of it and those above */
    int all_recent;        /* with recent: everything beneath is marked (a subvolume put in) */
} Lister;

static int reserve(Lister *l, size_t more) {
    Buffer *b = &l->out;
    if (b->len + more <= b->cap)
        return 1;
    size_t cap = b->cap ? b->cap : 1 << 20;
    while (cap < b->len + more)
        cap *= 2;
    char *data = realloc(b->data, cap);
    if (data == NULL) {
        l->failed = ENOMEM;
        return 0;
    }
    b->data = data;
    b->cap = cap;
    return 1;
}

static char *put_unsigned(char *at, unsigned long long value) {
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + value % 10);
        value /= 10;
    } while (value);
    while (n)
        *at++ = digits[--n];
    return at;
}

static char *put_octal(char *at, unsigned value) {
    char digits[12];
    int n = 0;
    do {
        digits[n++] = (char)('0' + (value & 7));
        value >>= 3;
    } while (value);
    while (n)
        *at++ = digits[--n];
    return at;
}

static char kind_of(mode_t mode) {
    if (S_ISREG(mode)) return 'f';
    if (S_ISDIR(mode)) return 'd';
    if (S_ISLNK(mode)) return 'l';
    if (S_ISFIFO(mode)) return 'p';
    if (S_ISSOCK(mode)) return 's';
    if (S_ISBLK(mode)) return 'b';
    if (S_ISCHR(mode)) return 'c';
    return 'U';
}

/* The record of the entry whose path is l->path[0:end]. */
static void put_folder(Lister *l, size_t end) {
    if (!reserve(l, end + 9))
        return;
    char *at = l->out.data + l->out.len;
    memcpy(at, "d 0 0 0 ", 8);
    memcpy(at + 8, l->path, end);
    at[8 + end] = '\0';
    l->out.len += end + 9;
}

static long long ctime_ns(const struct stat *st) {
    return (long long)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
}

static void put_entry(Lister *l, size_t end, const struct stat *st) {
    if (!reserve(l, end + 120))
        return;
    char *start = l->out.data + l->out.len, *at = start;
    if (l->recent >= 0 && (l->all_recent || ctime_ns(st) >= l->recent))
        *at++ = '+';
    *at++ = kind_of(st->st_mode);
    *at++ = ' ';
    at = put_unsigned(at, (unsigned long long)(st->st_size < 0 ? 0 : st->st_size));
    *at++ = ' ';
    at = put_octal(at, (unsigned)(st->st_mode & 07777));
    *at++ = ' ';
    if (st->st_mtim.tv_sec < 0) {
        *at++ = '-';  /* walk.expected() never vouches for a time before 1970 */
    } else {
        at = put_unsigned(at, (unsigned long long)st->st_mtim.tv_sec);
        *at++ = '.';
        char nanos[9];
        long ns = st->st_mtim.tv_nsec;
        for (int i = 8; i >= 0; i--) {
            nanos[i] = (char)('0' + ns % 10);
            ns /= 10;
        }
        memcpy(at, nanos, 9);
        at += 9;
        *at++ = '0';
    }
    *at++ = ' ';
    at = put_unsigned(at, (unsigned long long)st->st_ino);
    *at++ = ' ';
    memcpy(at, l->path, end);
    at += end;
    *at++ = '\0';
    l->out.len += (size_t)(at - start);
}

/* "K 0 0 0 ./PATH" (since-mode only): K is u for a folder that could not be opened, p for
 * one left out because of its name. */
static void put_marked(Lister *l, size_t end, char kind) {
    if (!reserve(l, end + 9))
        return;
    char *at = l->out.data + l->out.len;
    memcpy(at, "u 0 0 0 ", 8);
    at[0] = kind;
    memcpy(at + 8, l->path, end);
    at[8 + end] = '\0';
    l->out.len += end + 9;
}

/* 1: the folder l->path[0:end] is pruned by its path; 2: by its name, l->path[start:end] (a
 * pruned entry "*\/NAME" names every folder called NAME); 0: not pruned. */
static int is_pruned(Lister *l, size_t start, size_t end) {
    /* l->path is "./" + relative path; the caller's pruned paths are relative. */
    size_t rel = end - 2, name = end - start;
    for (Py_ssize_t i = 0; i < l->npruned; i++) {
        const char *pruned = l->pruned[i];
        size_t length = strlen(pruned);
        if (length == rel && memcmp(pruned, l->path + 2, rel) == 0)
            return 1;
        if (length == name + 2 && pruned[0] == '*' && pruned[1] == '/'
                && memcmp(pruned + 2, l->path + start, name) == 0)
            return 2;
    }
    return 0;
}

static void list_folder(Lister *l, int dirfd, size_t end);

/* Lists the entry named l->path[start:end], in the folder dirfd; type is its d_type. */
static void list_entry(Lister *l, int dirfd, size_t start, size_t end, unsigned char type) {
    const char *name = l->path + start;
    if (end - start == 4 && memcmp(name, ".git", 4) == 0)
        return;
    struct stat st;
    if (type != DT_DIR) {
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOMEM)
                l->failed = ENOMEM;
            return;  /* gone since the folder was read, or unreadable: find skips it too */
        }
        if (!S_ISDIR(st.st_mode)) {
            if (l->since < 0 || ctime_ns(&st) >= l->since)
                put_entry(l, end, &st);
            return;
        }
    }
    int pruned = is_pruned(l, start, end);
    if (pruned) {
        if (pruned == 2 && l->since >= 0)
            put_marked(l, end, 'n');  /* the caller makes sure the rules ignore it */
        return;
    }
    if (l->since < 0)
        put_folder(l, end);
    if (l->depth >= MAX_DEPTH) {
        l->failed = ELOOP;
        return;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM)
            l->failed = errno;
        else if (l->since >= 0 && (errno == EACCES || errno == EPERM))
            put_marked(l, end, 'u');  /* what changed in it, the caller asks for by name */
        return;  /* unreadable, or replaced since: listed, its contents not (as find does) */
    }
    dev_t dev = l->dev;
    long long changed = l->changed;
    int all_recent = l->all_recent;
    if (l->recent >= 0) {
        struct stat folder;
        if (fstat(fd, &folder) != 0) {
            l->all_recent = 1;  /* its device unknown: nothing beneath can be vouched for */
        } else {
            if (folder.st_dev != dev && changed >= l->recent)
                l->all_recent = 1;
            l->dev = folder.st_dev;
            if (ctime_ns(&folder) > changed)
                l->changed = ctime_ns(&folder);
        }
    }
    l->depth++;
    list_folder(l, fd, end);
    l->depth--;
    l->dev = dev;
    l->changed = changed;
    l->all_recent = all_recent;
    close(fd);
}

/* Lists the contents of the open folder fd, whose path is l->path[0:end]. */
static void list_folder(Lister *l, int fd, size_t end) {
    size_t size = DENTS_SIZE, used = 0;
    char *dents = malloc(size);
    if (dents == NULL) {
        l->failed = ENOMEM;
        return;
    }
    for (;;) {  /* read the whole folder first: the recursion below reuses nothing of it */
        if (size - used < DENTS_SIZE) {
            char *more = realloc(dents, size * 2);
            if (more == NULL) {
                l->failed = ENOMEM;
                free(dents);
                return;
            }
            dents = more;
            size *= 2;
        }
        long n = syscall(SYS_getdents64, fd, dents + used, size - used);
        if (n < 0) {
            if (errno == ENOMEM)
                l->failed = ENOMEM;
            break;  /* what was read is listed, as find lists it */
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    if (used > 0 && used < size) {  /* held while the subfolders are listed: no more than read */
        char *fitted = realloc(dents, used);
        if (fitted != NULL)
            dents = fitted;
    }
    l->path[end] = '/';
    for (size_t at = 0; at < used && !l->failed;) {
        struct linux_dirent64 *d = (struct linux_dirent64 *)(dents + at);
        at += d->d_reclen;
        const char *name = d->d_name;
        if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0')))
            continue;
        size_t length = strlen(name);
        if (end + 1 + length + 1 > PATH_SIZE) {
            l->failed = ENAMETOOLONG;
            break;
        }
        memcpy(l->path + end + 1, name, length + 1);
        list_entry(l, fd, end + 1, end + 1 + length, d->d_type);
    }
    l->path[end] = '\0';
    free(dents);
}

static PyObject *listing(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *root_arg, *names_list, *pruned_list, *root_bytes = NULL, *result = NULL;
    long long since = -1, recent = -1;
    if (!PyArg_ParseTuple(args, "OO!O!|LL", &root_arg, &PyList_Type, &names_list, &PyList_Type,
                          &pruned_list, &since, &recent))
        return NULL;
    /* Copies that nothing can change while they are read, holding only str. */
    PyObject *names_arg = PySequence_Tuple(names_list);
    PyObject *pruned_arg = names_arg ? PySequence_Tuple(pruned_list) : NULL;
    if (pruned_arg == NULL) {
        Py_XDECREF(names_arg);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(names_arg) + PyTuple_GET_SIZE(pruned_arg); i++) {
        PyObject *item = i < PyTuple_GET_SIZE(names_arg)
                             ? PyTuple_GET_ITEM(names_arg, i)
                             : PyTuple_GET_ITEM(pruned_arg, i - PyTuple_GET_SIZE(names_arg));
        if (!PyUnicode_CheckExact(item)) {
            PyErr_SetString(PyExc_TypeError, "names and pruned must hold str only");
            Py_DECREF(names_arg);
            Py_DECREF(pruned_arg);
            return NULL;
        }
    }
    if (!PyUnicode_FSConverter(root_arg, &root_bytes)) {
        Py_DECREF(names_arg);
        Py_DECREF(pruned_arg);
        return NULL;
    }
    Lister l = {0};
    l.since = since < 0 ? -1 : since;
    l.recent = recent < 0 || since >= 0 ? -1 : recent;
    Py_ssize_t nnames = PyTuple_GET_SIZE(names_arg);
    l.npruned = PyTuple_GET_SIZE(pruned_arg);
    char **names = calloc((size_t)nnames + 1, sizeof(char *));
    l.pruned = calloc((size_t)l.npruned + 1, sizeof(char *));
    PyObject **held = calloc((size_t)(nnames + l.npruned) + 1, sizeof(PyObject *));
    Py_ssize_t nheld = 0;
    if (names == NULL || l.pruned == NULL || held == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < nnames + l.npruned; i++) {
        PyObject *item = i < nnames ? PyTuple_GET_ITEM(names_arg, i)
                                    : PyTuple_GET_ITEM(pruned_arg, i - nnames);
        if (!PyUnicode_FSConverter(item, &held[nheld]))
            goto done;
        char *text = PyBytes_AS_STRING(held[nheld++]);
        if (i < nnames)
            names[i] = text;
        else
            l.pruned[i - nnames] = text;
    }
    int rootfd = open(PyBytes_AS_STRING(root_bytes), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, root_arg);
        goto done;
    }
    struct stat root_stat;
    if (l.recent >= 0) {  /* the root's own device and change time are the caller's to judge */
        if (fstat(rootfd, &root_stat) != 0) {
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, root_arg);
            close(rootfd);
            goto done;
        }
        l.dev = root_stat.st_dev;
        l.changed = ctime_ns(&root_stat);
    }
    Py_BEGIN_ALLOW_THREADS
    l.path[0] = '.';
    for (Py_ssize_t i = 0; i < nnames && !l.failed; i++) {
        size_t length = strlen(names[i]);
        if (length == 0 || strchr(names[i], '/') != NULL || length + 3 > PATH_SIZE) {
            l.failed = EINVAL;  /* a top-level name, never a path */
            break;
        }
        l.path[1] = '/';
        memcpy(l.path + 2, names[i], length + 1);
        list_entry(&l, rootfd, 2, 2 + length, DT_UNKNOWN);
    }
    close(rootfd);
    Py_END_ALLOW_THREADS
    if (l.failed) {
        errno = l.failed;
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    result = PyBytes_FromStringAndSize(l.out.data ? l.out.data : "", (Py_ssize_t)l.out.len);
done:
    free(l.out.data);
    for (Py_ssize_t i = 0; i < nheld; i++)
        Py_DECREF(held[i]);
    free(held);
    free(names);
    free(l.pruned);
    Py_DECREF(root_bytes);
    Py_DECREF(names_arg);
    Py_DECREF(pruned_arg);
    return result;
}

static PyMethodDef methods[] = {
    {"listing", listing, METH_VARARGS,
     "listing(root, names, pruned, since_ns=-1, recent_ns=-1) -> bytes\n\n"
     "The records of the top-level entries `names` of the folder `root` and of everything\n"
     "beneath them, leaving out entries named .git and the folders whose relative paths are in\n"
     "`pruned`; with since_ns, only those of non-folders whose inode changed at or after it\n"
     "(ctime, in nanoseconds since 1970); else with recent_ns, those records of non-folders\n"
     "whose inode changed at or after it start with '+'. Raises OSError when the listing\n"
     "could not be whole (out of memory or file descriptors, a path too long, folders nested\n"
     "deeper than 128); an unreadable folder is listed without its contents."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_listing",
    "The full-scan fallback's listing of a tree, in C (see walk.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__listing(void) { return PyModule_Create(&module); }
