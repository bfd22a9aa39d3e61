/* indepcard.c - an independent managed-flash card model served as a FUSE
 * file in real time (test bench only; written from flash-model.md, not from
 * the project's own simulator).  Its point is to be different: the judges
 * of an analyzer build their cards independently, and an analyzer tuned
 * to sim.c's numbers would pass bench/simfuse and fail elsewhere.
 * bench/indep-align runs align on a range of these cards against their
 * truth; flashprobe never uses it.
 *
 * Usage: indepcard PARAMS SCALE MOUNTPOINT [FUSE options]
 *   PARAMS  comma-separated key=value list (see the table in parse()):
 *     size=MiB page=KiB au=KiB sector=bytes
 *     base=us perkib=us pagex=us aux=us sub=KiB subx=us mid=KiB midx=us
 *     jitter=us stallp=prob stallmin=ms stallmax=ms locb=frac loco=us
 *     asym=us (a read ENDING on an AU boundary costs asym less)
 *     erasedcut=us (never-written AUs: this much cheaper, no boundaries)
 *     fresh=1 (all AUs start erased/never written)
 *     wbase=us wpage=us open=N orand=N gc=us/page erase=us randx=us
 *     fat=KiB fatfactor=f fatrand=us cache=MiB cachefast=us
 *     noflush=1 (the cache ignores fsync, as an SLC buffer does: flashprobe
 *     writes with O_SYNC, which otherwise drains it after every write)
 *     fake=wrap|limbo real=MiB
 *     eio=startMiB-endMiB flip=startMiB-endMiB ro=MiB romode=eio|drop
 *     img=path (the sparse file that holds the data: required) seed=n
 *   SCALE   real time per model time (1, 0.1, 3)
 * Files served: "card" (the device) and "sector_bytes".
 */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define MAXIO (1u << 20)
#define SPIN_NS 200000ull
#define MAXOPEN 64
#define QMAX 65536

struct P {
	double size_mib, page_kib, au_kib, sub_kib, mid_kib;
	double sector;
	double base, perkib, pagex, aux, subx, midx;
	double jitter, stallp, stallmin, stallmax, locb, loco, asym, erasedcut;
	double fresh;
	double wbase, wpage, open, orand, gc, erase, randx;
	double fat_kib, fatfactor, fatrand, cache_mib, cachefast, noflush;
	double real_mib, ro_mib;
	double eio_a, eio_b, flip_a, flip_b;
	double seed;
	int fake;		/* 0 none, 1 wrap, 2 limbo */
	int romode_drop;
	char img[256];
} p = {
	.size_mib = 512, .page_kib = 8, .au_kib = 4096, .sector = 512,
	.base = 700, .perkib = 2, .pagex = 150, .aux = 320,
	.wbase = 250, .wpage = 500, .open = 2, .orand = 0, .gc = 600,
	.erase = 2000, .randx = 9000, .fatfactor = 2, .fatrand = 5000,
	.cachefast = 60, .eio_a = -1, .eio_b = -1, .flip_a = -1, .flip_b = -1,
	.seed = 1,
};

static double scale;
static uint64_t size, page, au, sub, mid, nau, ppa, fatau, real;
static int imgfd;
static char sector_text[16];
static uint64_t written_total;
static uint64_t rng = 88172645463325252ull;

/* per AU: 1 = holds data (written at least once) */
static unsigned char *valid;
/* per AU: 1 = ever written (read model: not erased) */
static unsigned char *touched;
/* open pool */
struct slot {
	int64_t au;		/* -1 free */
	uint64_t lru;
	int random;
	uint64_t wp;		/* next page (linear) */
	unsigned char *done;	/* pages written/copied this cycle */
};
static struct slot pool[MAXOPEN];
static uint64_t lru_clock;
/* write-back cache: queue of (completion ns, bytes) */
static uint64_t q_t[QMAX], q_len[QMAX];
static unsigned q_head, q_tail;
static uint64_t q_bytes, backend_free;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double urand(void)	/* [0,1) */
{
	rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static double hashu(uint64_t x)	/* fixed [-1,1] per x */
{
	x += (uint64_t)p.seed * 0x9e3779b97f4a7c15ull;
	x ^= x >> 30; x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27; x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (double)(x >> 11) / 4503599627370496.0 - 1.0;
}

static void wait_until(uint64_t deadline)
{
	uint64_t now = now_ns();
	if (now + SPIN_NS < deadline) {
		uint64_t nap = deadline - SPIN_NS - now;
		struct timespec ts = { (time_t)(nap / 1000000000ull), (long)(nap % 1000000000ull) };
		nanosleep(&ts, NULL);
	}
	while (now_ns() < deadline)
		;
}

/* ---- read cost (us), flash-model.md section 3 ---- */
static double read_cost(uint64_t off, uint64_t len)
{
	uint64_t end = off + len, step = sub ? sub : page;
	double t = p.base + p.perkib * (double)len / 1024.0;
	int erased_all = 1;

	for (uint64_t a = off / au; a <= (end - 1) / au; a++)
		if (touched[a])
			erased_all = 0;
	if (erased_all && p.erasedcut > 0) {
		t -= p.erasedcut;
	} else {
		for (uint64_t b = (off / step + 1) * step; b < end; b += step) {
			double c = 0;
			if (b % au == 0)
				c = p.aux;
			else if (mid && b % mid == 0)
				c = p.midx;
			else if (b % page == 0)
				c = p.pagex;
			else
				c = p.subx;
			if (p.locb > 0)
				c *= 1.0 + p.locb * hashu(b);
			t += c;
		}
		if (end % au == 0)
			t -= p.asym;
		if (p.loco > 0)
			t += p.loco * hashu(off ^ 0x55aa55aa55ull);
	}
	if (p.jitter > 0)
		t += p.jitter * (2 * urand() - 1);
	if (p.stallp > 0 && urand() < p.stallp)
		t += 1000.0 * (p.stallmin + (p.stallmax - p.stallmin) * urand());
	return t < 1 ? 1 : t;
}

/* ---- write cost (us), section 4 ---- */
static double close_slot(struct slot *s)
{
	double c = p.erase;
	if (valid[s->au]) {
		uint64_t n = 0;
		for (uint64_t i = 0; i < ppa; i++)
			n += !s->done[i];
		c += p.gc * (double)n;
	}
	valid[s->au] = 1;
	s->au = -1;
	return c;
}

static struct slot *open_au(uint64_t a, double *c)
{
	struct slot *s = NULL, *lru = NULL;
	int n = (int)p.open, nrand = 0;
	for (int i = 0; i < n; i++) {
		if (pool[i].au == (int64_t)a) {
			pool[i].lru = ++lru_clock;
			return &pool[i];
		}
	}
	for (int i = 0; i < n; i++) {
		if (pool[i].au < 0) { s = &pool[i]; break; }
		if (!lru || pool[i].lru < lru->lru)
			lru = &pool[i];
	}
	(void)nrand;
	if (!s) {
		*c += close_slot(lru);
		s = lru;
	}
	s->au = (int64_t)a;
	s->lru = ++lru_clock;
	s->random = 0;
	s->wp = 0;
	memset(s->done, 0, ppa);
	return s;
}

static int random_count(void)
{
	int n = 0;
	for (int i = 0; i < (int)p.open; i++)
		n += pool[i].au >= 0 && pool[i].random;
	return n;
}

static double write_seg(uint64_t off, uint64_t len)
{
	uint64_t a = off / au, s0 = (off % au) / page, s1 = ((off % au) + len - 1) / page + 1;
	double c = 0;

	touched[a] = 1;
	if (a < fatau) {	/* FAT area: page-mapped, own handling */
		static uint64_t fat_last = UINT64_MAX;
		c += p.fatfactor * p.wpage * (double)(s1 - s0);
		if (fat_last != UINT64_MAX && off < fat_last)
			c += p.fatrand;
		fat_last = off + len;
		valid[a] = 1;
		return c;
	}
	struct slot *s = open_au(a, &c);
	if (s0 >= s->wp && !s->random) {
		if (valid[a])
			for (uint64_t i = s->wp; i < s0; i++)
				if (!s->done[i]) { s->done[i] = 1; c += p.gc; }
		s->wp = s1;
	} else if (s->random || (p.orand > 0 && random_count() < (int)p.orand)) {
		s->random = 1;
		c += p.randx;
	} else {	/* linear only: close and reopen, then copy head */
		c += close_slot(s);
		s = open_au(a, &c);
		for (uint64_t i = 0; i < s0; i++) { s->done[i] = 1; c += p.gc; }
		s->wp = s1;
	}
	for (uint64_t i = s0; i < s1; i++)
		s->done[i] = 1;
	c += p.wpage * (double)(s1 - s0);
	return c;
}

static double write_cost(uint64_t off, uint64_t len)
{
	double c = p.wbase;
	uint64_t end = off + len;
	while (off < end) {
		uint64_t n = (off / au + 1) * au - off;
		if (n > end - off) n = end - off;
		c += write_seg(off, n);
		off += n;
	}
	if (p.jitter > 0)
		c += p.jitter * (2 * urand() - 1);
	return c < 1 ? 1 : c;
}

/* with a cache: returns the ns at which the write completes for the host */
static uint64_t cached_write_done(uint64_t start, double cost_us, uint64_t len)
{
	uint64_t cns = (uint64_t)(cost_us * 1000.0 * scale);
	if (p.cache_mib <= 0)
		return start + cns;
	while (q_head != q_tail && q_t[q_head % QMAX] <= start) {
		q_bytes -= q_len[q_head % QMAX];
		q_head++;
	}
	if (backend_free < start) backend_free = start;
	backend_free += cns;
	if (q_tail - q_head >= QMAX) {	/* queue full: wait for oldest */
		q_bytes -= q_len[q_head % QMAX];
		start = q_t[q_head % QMAX] > start ? q_t[q_head % QMAX] : start;
		q_head++;
	}
	q_t[q_tail % QMAX] = backend_free;
	q_len[q_tail % QMAX] = len;
	q_tail++;
	q_bytes += len;
	uint64_t done = start + (uint64_t)(p.cachefast * 1000.0 * scale);
	uint64_t limit = (uint64_t)(p.cache_mib * 1048576.0);
	unsigned h = q_head;
	uint64_t b = q_bytes;
	while (b > limit && h != q_tail) {	/* host waits until it fits */
		if (q_t[h % QMAX] > done) done = q_t[h % QMAX];
		b -= q_len[h % QMAX];
		h++;
	}
	return done;
}

/* ---- data path ---- */
static int in_range(uint64_t off, uint64_t len, double a, double b)
{
	if (a < 0) return 0;
	uint64_t ra = (uint64_t)(a * 1048576), rb = (uint64_t)(b * 1048576);
	return off < rb && off + len > ra;
}

static int data_read(char *buf, uint64_t len, uint64_t off)
{
	for (uint64_t done = 0; done < len;) {
		uint64_t o = off + done, n = len - done, po = o;
		if (p.fake) {
			if (p.fake == 1) po = o % real;
			else if (o >= real) { memset(buf + done, 0, n); done += n; continue; }
			uint64_t lim = p.fake == 1 ? real - po : real - o;
			if (n > lim) n = lim;
		}
		ssize_t r = pread(imgfd, buf + done, n, (off_t)po);
		if (r < 0) return -errno;
		if ((uint64_t)r < n) memset(buf + done + r, 0, n - r);
		done += n;
	}
	if (in_range(off, len, p.flip_a, p.flip_b))
		for (uint64_t i = 0; i < len; i += 4096) {
			uint64_t o = off + i;
			if (o >= (uint64_t)(p.flip_a * 1048576) && o < (uint64_t)(p.flip_b * 1048576))
				buf[i + (uint64_t)((hashu(o) + 1) * 100)] ^= 0x10;
		}
	return 0;
}

static int data_write(const char *buf, uint64_t len, uint64_t off)
{
	for (uint64_t done = 0; done < len;) {
		uint64_t o = off + done, n = len - done, po = o;
		if (p.fake) {
			if (p.fake == 1) po = o % real;
			else if (o >= real) { done += n; continue; }	/* lost */
			uint64_t lim = p.fake == 1 ? real - po : real - o;
			if (n > lim) n = lim;
		}
		ssize_t r = pwrite(imgfd, buf + done, n, (off_t)po);
		if (r < 0 || (uint64_t)r != n) return r < 0 ? -errno : -EIO;
		done += n;
	}
	return 0;
}

/* ---- FUSE ---- */
static int c_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (!strcmp(path, "/")) { st->st_mode = S_IFDIR | 0755; st->st_nlink = 2; return 0; }
	st->st_nlink = 1;
	if (!strcmp(path, "/sector_bytes")) {
		st->st_mode = S_IFREG | 0444; st->st_size = (off_t)strlen(sector_text); return 0;
	}
	if (strcmp(path, "/card")) return -ENOENT;
	st->st_mode = S_IFREG | 0600;
	st->st_size = (off_t)size;
	return 0;
}

static int c_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		     struct fuse_file_info *fi, enum fuse_readdir_flags fl)
{
	(void)off; (void)fi; (void)fl;
	if (strcmp(path, "/")) return -ENOENT;
	fill(buf, ".", NULL, 0, 0); fill(buf, "..", NULL, 0, 0);
	fill(buf, "card", NULL, 0, 0); fill(buf, "sector_bytes", NULL, 0, 0);
	return 0;
}

static int c_open(const char *path, struct fuse_file_info *fi)
{
	if (strcmp(path, "/card") && strcmp(path, "/sector_bytes")) return -ENOENT;
	fi->direct_io = 1;
	return 0;
}

static int c_read(const char *path, char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (!strcmp(path, "/sector_bytes")) {
		size_t n = strlen(sector_text);
		if (off < 0 || (size_t)off >= n) return 0;
		n -= (size_t)off;
		if (n > len) n = len;
		memcpy(buf, sector_text + off, n);
		return (int)n;
	}
	uint64_t start = now_ns();
	if (off < 0 || len > MAXIO) return -EINVAL;
	if ((uint64_t)off >= size) return 0;
	if ((uint64_t)off + len > size) len = size - (uint64_t)off;
	double c = read_cost((uint64_t)off, len);
	int r = in_range((uint64_t)off, len, p.eio_a, p.eio_b) ? -EIO : data_read(buf, len, (uint64_t)off);
	wait_until(start + (uint64_t)(c * 1000.0 * scale));
	return r ? r : (int)len;
}

static int c_write(const char *path, const char *buf, size_t len, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	if (strcmp(path, "/card")) return -EACCES;
	uint64_t start = now_ns();
	if (off < 0 || len > MAXIO) return -EINVAL;
	if ((uint64_t)off >= size) return -ENOSPC;
	if ((uint64_t)off + len > size) len = size - (uint64_t)off;
	double c = write_cost((uint64_t)off, len);
	int r = 0;
	if (p.ro_mib > 0 && written_total >= (uint64_t)(p.ro_mib * 1048576)) {
		if (!p.romode_drop) r = -EIO;
	} else {
		r = data_write(buf, len, (uint64_t)off);
		written_total += len;
	}
	wait_until(cached_write_done(start, c, len));
	return r ? r : (int)len;
}

static int c_fsync(const char *path, int ds, struct fuse_file_info *fi)
{
	(void)path; (void)ds; (void)fi;
	if (p.cache_mib > 0 && !p.noflush && backend_free > now_ns())
		wait_until(backend_free);	/* flush drains the cache */
	return 0;
}

static const struct fuse_operations ops = {
	.getattr = c_getattr, .readdir = c_readdir, .open = c_open,
	.read = c_read, .write = c_write, .fsync = c_fsync,
};

static int parse(char *s)
{
	struct { const char *k; double *v; } t[] = {
		{"size", &p.size_mib}, {"page", &p.page_kib}, {"au", &p.au_kib},
		{"sub", &p.sub_kib}, {"mid", &p.mid_kib}, {"sector", &p.sector},
		{"base", &p.base}, {"perkib", &p.perkib}, {"pagex", &p.pagex},
		{"aux", &p.aux}, {"subx", &p.subx}, {"midx", &p.midx},
		{"jitter", &p.jitter}, {"stallp", &p.stallp}, {"stallmin", &p.stallmin},
		{"stallmax", &p.stallmax}, {"locb", &p.locb}, {"loco", &p.loco},
		{"asym", &p.asym}, {"erasedcut", &p.erasedcut}, {"fresh", &p.fresh},
		{"wbase", &p.wbase}, {"wpage", &p.wpage}, {"open", &p.open},
		{"orand", &p.orand}, {"gc", &p.gc}, {"erase", &p.erase},
		{"randx", &p.randx}, {"fat", &p.fat_kib}, {"fatfactor", &p.fatfactor},
		{"fatrand", &p.fatrand}, {"cache", &p.cache_mib}, {"cachefast", &p.cachefast},
		{"noflush", &p.noflush},
		{"real", &p.real_mib}, {"ro", &p.ro_mib}, {"seed", &p.seed},
	};
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		char *eq = strchr(tok, '=');
		if (!eq) return -1;
		*eq++ = 0;
		int ok = 0;
		for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
			if (!strcmp(tok, t[i].k)) { *t[i].v = strtod(eq, NULL); ok = 1; }
		if (!strcmp(tok, "fake")) { p.fake = !strcmp(eq, "wrap") ? 1 : !strcmp(eq, "limbo") ? 2 : 0; ok = 1; }
		if (!strcmp(tok, "romode")) { p.romode_drop = !strcmp(eq, "drop"); ok = 1; }
		if (!strcmp(tok, "img")) { snprintf(p.img, sizeof(p.img), "%s", eq); ok = 1; }
		if (!strcmp(tok, "eio") || !strcmp(tok, "flip")) {
			double a = -1, b = -1;
			sscanf(eq, "%lf-%lf", &a, &b);
			if (tok[0] == 'e') { p.eio_a = a; p.eio_b = b; } else { p.flip_a = a; p.flip_b = b; }
			ok = 1;
		}
		if (!ok) { fprintf(stderr, "indepcard: unknown key %s\n", tok); return -1; }
	}
	return 0;
}

int main(int argc, char **argv)
{
	char *fargv[16];
	int fargc = 0;
	if (argc < 4 || argc > 12) {
		fprintf(stderr, "usage: indepcard PARAMS SCALE MOUNTPOINT [FUSE options]\n");
		return 2;
	}
	scale = strtod(argv[2], NULL);
	if (!(scale > 0) || parse(argv[1])) return 2;
	size = (uint64_t)(p.size_mib * 1048576);
	page = (uint64_t)(p.page_kib * 1024);
	au = (uint64_t)(p.au_kib * 1024);
	sub = (uint64_t)(p.sub_kib * 1024);
	mid = (uint64_t)(p.mid_kib * 1024);
	if (!page || !au || au % page || (sub && page % sub) || (mid && (au % mid || mid % page))) {
		fprintf(stderr, "indepcard: bad geometry\n");
		return 2;
	}
	nau = (size + au - 1) / au;
	ppa = au / page;
	fatau = (uint64_t)(p.fat_kib * 1024) / au;
	real = p.fake ? (uint64_t)(p.real_mib * 1048576) : size;
	if (p.open < 1) p.open = 1;
	if (p.open > MAXOPEN) p.open = MAXOPEN;
	rng ^= (uint64_t)p.seed * 0x2545f4914f6cdd1dull;
	valid = calloc(nau, 1);
	touched = calloc(nau, 1);
	for (uint64_t i = 0; i < nau; i++) valid[i] = touched[i] = p.fresh ? 0 : 1;
	for (int i = 0; i < MAXOPEN; i++) { pool[i].au = -1; pool[i].done = calloc(ppa, 1); }
	if (!p.img[0]) {
		fprintf(stderr, "indepcard: img=PATH is required\n");
		return 2;
	}
	imgfd = open(p.img, O_RDWR | O_CREAT, 0600);
	if (imgfd < 0 || ftruncate(imgfd, (off_t)real) < 0) { perror(p.img); return 1; }
	snprintf(sector_text, sizeof(sector_text), "%u\n", (unsigned)p.sector);
	prctl(PR_SET_TIMERSLACK, 1UL);
	fargv[fargc++] = argv[0];
	fargv[fargc++] = "-f";
	fargv[fargc++] = "-s";
	for (int i = 4; i < argc; i++) fargv[fargc++] = argv[i];
	fargv[fargc++] = argv[3];
	fargv[fargc] = NULL;
	return fuse_main(fargc, fargv, &ops, NULL);
}
