/* help.c - the command's help, from the tables that make it true: the
 * options table (options.h), the reasons (explain.h) and the subcommands
 * (reprise.c).  `reprise --help`, each subcommand's --help, `reprise help
 * TOPIC` and the man page reprise(1) (`reprise help --man`, which the build
 * runs to make it) print the same texts, so they cannot drift apart. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "explain.h"
#include "options.h"
#include "reprise.h"

#define WIDTH 80 /* help lines are wrapped to this many columns */
#define COL 24   /* where an option's description starts */

/* The command's own options, beyond the table's. */
static const struct {
    const char *left, *desc;
} extra_options[] = {
    {"-o FILE", "the same as --stats FILE"},
    {"--min-replayed SHARE",
     "a guard for CI: run the program as a child (signals forwarded, its exit status kept "
     "when it fails), then exit 3 when less than SHARE (0.9 or 90%) of the ops of all the "
     "stats files the run left (every process's: --stats with %p) ran as graphs, or when "
     "it left none (without --stats, files of its own in a temporary folder)"},
    {"-h, --help", "print this help and exit"},
    {"-V, --version", "print the version and exit"},
};

static const char *const exit_text =
    "Exit status: the program's (a program killed by a signal: that signal); 2 on\n"
    "a usage error (an unknown option, an invalid value, a config file named by\n"
    "--config that cannot be read or has an invalid line, an output path that\n"
    "cannot be written); 127 if the program cannot be run; 1 if libreprise.so\n"
    "cannot be found; with --min-replayed, 3 when too little ran as graphs.\n";

static const char *const about_text =
    "Runs program with libreprise.so preloaded and enabled (REPRISE=1): the launch\n"
    "sequences it repeats are captured as CUDA graphs and replayed, results\n"
    "unchanged. At exit (and at SIGTERM, SIGINT or SIGHUP) a few lines say how much\n"
    "ran as graphs and why the rest did not; --stats writes the same as JSON, also\n"
    "every few seconds while the program runs. Each option sets the REPRISE_*\n"
    "variable named; an invalid value, or a config file that cannot be read, is an\n"
    "error before the program starts.\n";

/* Prints `text` from column `col` (the cursor is there), words wrapped to
 * WIDTH, continuation lines indented to `col`. */
static void wrap(FILE *f, int col, const char *text)
{
    int at = col;
    const char *p = text;
    while (*p) {
        size_t w = strcspn(p, " ");
        if (at > col && at + 1 + (int)w > WIDTH) {
            fprintf(f, "\n%*s", col, "");
            at = col;
        } else if (at > col) {
            fputc(' ', f);
            at++;
        }
        fwrite(p, 1, w, f);
        at += (int)w;
        p += w;
        while (*p == ' ')
            p++;
    }
    fputc('\n', f);
}

/* "  LEFT   description", the description at COL, or on the next line when
 * LEFT reaches it. */
static void item(FILE *f, const char *left, const char *desc)
{
    int n = fprintf(f, "  %s", left);
    if (n + 2 > COL)
        fprintf(f, "\n%*s", COL, "");
    else
        fprintf(f, "%*s", COL - n, "");
    wrap(f, COL, desc);
}

static void usage_lines(FILE *f)
{
    fprintf(f, "usage: reprise [options] [--] program [args...]\n");
    for (size_t k = 0; k < rp_n_subcommands; k++)
        fprintf(f, "       reprise %s %s\n", rp_subcommands[k].name, rp_subcommands[k].synopsis);
}

/* Each option of the command, as `emit(f, left, description)`: the
 * table's (its flag and value, what it does, the variable it sets), then
 * the command's own; `end` closes each of the table's descriptions. */
static void each_option(FILE *f, void (*emit)(FILE *, const char *, const char *),
                        const char *end)
{
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        const struct rp__option_desc *d = &rp__option_descs[id];
        if (!d->cli)
            continue;
        char left[64], desc[512];
        snprintf(left, sizeof left, "%s%s%s", d->cli, d->metavar ? " " : "",
                 d->metavar ? d->metavar : "");
        snprintf(desc, sizeof desc, "%s (sets %s)%s", d->desc, d->env, end);
        emit(f, left, desc);
    }
    for (size_t i = 0; i < sizeof extra_options / sizeof extra_options[0]; i++)
        emit(f, extra_options[i].left, extra_options[i].desc);
}

void rp_help_run(FILE *f)
{
    usage_lines(f);
    fputs(about_text, f);
    fprintf(f, "\noptions:\n");
    each_option(f, item, "");
    fprintf(f, "\nsubcommands (each takes --help):\n");
    for (size_t k = 0; k < rp_n_subcommands; k++)
        item(f, rp_subcommands[k].name, rp_subcommands[k].summary);
    fprintf(f, "\n%s", exit_text);
    fprintf(f, "More: reprise help config|environment|reasons, and man reprise.\n");
}

void rp_help_subcommand(FILE *f, const struct rp_subcommand *s)
{
    fprintf(f, "usage: reprise %s %s\n", s->name, s->synopsis);
    fputs(s->help ? s->help : "", f);
}

static void environment(FILE *f)
{
    fprintf(f, "The shim reads these variables (the reprise command sets them from its options;\n"
               "set by hand, with LD_PRELOAD=libreprise.so, an invalid value is warned about\n"
               "once, naming the variable, and the default is used: a preload never stops a\n"
               "program):\n");
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        const struct rp__option_desc *d = &rp__option_descs[id];
        char desc[512];
        snprintf(desc, sizeof desc, "%s (default: %s%s%s)", d->desc,
                 d->def[0] ? d->def : "unset", d->cli ? "; " : "", d->cli ? d->cli : "");
        item(f, d->env, desc);
    }
}

static void config(FILE *f)
{
    fprintf(f, "A config file (--config FILE, or REPRISE_CONFIG) holds `key = value` lines; `#`\n"
               "starts a comment. A key is a variable's name without REPRISE_, in any case;\n"
               "exclude and include may repeat and add to their list. The environment (and so\n"
               "a flag of the command) wins over the file. Under the command, a file that\n"
               "cannot be read or has an invalid line is an error naming the file and line;\n"
               "named by REPRISE_CONFIG by hand, each bad line is reported and ignored.\n"
               "The keys, what they accept and their defaults:\n");
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        const struct rp__option_desc *d = &rp__option_descs[id];
        if (strncmp(d->env, "REPRISE_", 8) != 0 || id == RP_OPTION_CONFIG)
            continue;
        char key[40], accepts[200], desc[320];
        snprintf(desc, sizeof desc, "%s (default: %s)",
                 rp__option_accepts(id, accepts, sizeof accepts), d->def[0] ? d->def : "unset");
        item(f, rp__option_key(id, key, sizeof key), desc);
    }
}

static void reasons(FILE *f)
{
    fprintf(f, "Why ops ran eagerly (one by one) instead of in a graph: the keys of the stats\n"
               "file's ops_eager, as the summary and reprise report name them.\n");
    for (int i = 0; i < RP_EAGER_REASON_COUNT; i++)
        item(f, rp__reasons[i].key, rp__reasons[i].meaning);
}

/* ---- the man page ---------------------------------------------------------- */

/* `s` for roff: backslashes escaped, a dash as a minus (options), a line
 * that would start with a control character guarded. */
static void roff(FILE *f, const char *s)
{
    bool bol = true;
    for (; *s; s++) {
        if (bol && (*s == '.' || *s == '\''))
            fputs("\\&", f);
        if (*s == '\\')
            fputs("\\e", f);
        else if (*s == '-')
            fputs("\\-", f);
        else
            fputc(*s, f);
        bol = *s == '\n';
    }
}

/* A paragraph of help text, its line breaks kept where it lists things. */
static void roff_text(FILE *f, const char *s)
{
    roff(f, s);
    if (s[0] && s[strlen(s) - 1] != '\n')
        fputc('\n', f);
}

static void roff_item(FILE *f, const char *left, const char *desc)
{
    fputs(".TP\n.B ", f);
    roff(f, left);
    fputc('\n', f);
    roff_text(f, desc);
}

static void man(FILE *f)
{
    fprintf(f, ".TH REPRISE 1 \"\" \"reprise %s\" \"User Commands\"\n", REPRISE_VERSION);
    fprintf(f, ".SH NAME\nreprise \\- run a CUDA program with its repeated launches replayed as "
               "CUDA graphs\n.SH SYNOPSIS\n.nf\n");
    fprintf(f, "\\fBreprise\\fR [\\fIoptions\\fR] [\\-\\-] \\fIprogram\\fR [\\fIargs\\fR...]\n");
    for (size_t k = 0; k < rp_n_subcommands; k++) {
        fprintf(f, "\\fBreprise %s\\fR ", rp_subcommands[k].name);
        roff_text(f, rp_subcommands[k].synopsis);
    }
    fprintf(f, ".fi\n.SH DESCRIPTION\n");
    roff_text(f, about_text);
    fprintf(f, ".PP\nThe same library works without the command: "
               "LD_PRELOAD=/path/libreprise.so REPRISE=1 program (see ENVIRONMENT).\n");
    fprintf(f, ".SH OPTIONS\n");
    each_option(f, roff_item, ".");
    fprintf(f, ".SH COMMANDS\n");
    for (size_t k = 0; k < rp_n_subcommands; k++) {
        char left[128];
        snprintf(left, sizeof left, "reprise %s %s", rp_subcommands[k].name,
                 rp_subcommands[k].synopsis);
        roff_item(f, left, rp_subcommands[k].help ? rp_subcommands[k].help
                                                  : rp_subcommands[k].summary);
    }
    fprintf(f, ".SH REASONS\n");
    fprintf(f, "Why ops ran eagerly instead of in a graph (the stats file's ops_eager keys):\n");
    for (int i = 0; i < RP_EAGER_REASON_COUNT; i++)
        roff_item(f, rp__reasons[i].key, rp__reasons[i].meaning);
    fprintf(f, ".SH ENVIRONMENT\n");
    fprintf(f, "Set by hand, an invalid value is warned about once and the default is used.\n");
    for (int id = 0; id < RP_OPTION_COUNT; id++) {
        const struct rp__option_desc *d = &rp__option_descs[id];
        char desc[512];
        snprintf(desc, sizeof desc, "%s (default: %s).", d->desc, d->def[0] ? d->def : "unset");
        roff_item(f, d->env, desc);
    }
    fprintf(f, ".SH FILES\n");
    fprintf(f, "A config file named by \\-\\-config or REPRISE_CONFIG: key = value lines, a key "
               "being a variable's name without REPRISE_ (reprise help config).\n");
    fprintf(f, ".SH EXIT STATUS\n");
    roff_text(f, exit_text);
    fprintf(f, ".SH SEE ALSO\nThe documents installed under share/doc/reprise: README.md, "
               "stats.md (the stats file, key by key), trace.md, engine.md.\n");
}

int rp_help_main(int argc, char **argv)
{
    const char *topic = argc > 1 ? argv[1] : NULL;
    if (argc > 2) {
        fprintf(stderr, "reprise help: one topic at a time (see reprise help)\n");
        return 2;
    }
    if (!topic) {
        usage_lines(stdout);
        printf("\nsubcommands (each takes --help):\n");
        for (size_t k = 0; k < rp_n_subcommands; k++)
            item(stdout, rp_subcommands[k].name, rp_subcommands[k].summary);
        printf("\ntopics: reprise help options|config|environment|reasons|exit|SUBCOMMAND\n"
               "        reprise help --man   (the man page, reprise(1))\n");
        return 0;
    }
    if (!strcmp(topic, "options") || !strcmp(topic, "run"))
        rp_help_run(stdout);
    else if (!strcmp(topic, "config"))
        config(stdout);
    else if (!strcmp(topic, "environment") || !strcmp(topic, "env"))
        environment(stdout);
    else if (!strcmp(topic, "reasons"))
        reasons(stdout);
    else if (!strcmp(topic, "exit"))
        fputs(exit_text, stdout);
    else if (!strcmp(topic, "--man"))
        man(stdout);
    else {
        for (size_t k = 0; k < rp_n_subcommands; k++) {
            const struct rp_subcommand *s = &rp_subcommands[k];
            size_t word = strcspn(s->name, " ");
            if (strncmp(topic, s->name, word) != 0 || topic[word] != '\0')
                continue;
            if (s->help) {
                rp_help_subcommand(stdout, s);
                return 0;
            }
            char *av[] = {(char *)s->name, "--help", NULL};
            return s->main(2, av);
        }
        fprintf(stderr, "reprise help: no topic '%s' (the topics: options, config, environment, "
                        "reasons, exit, or a subcommand)\n", topic);
        return 2;
    }
    return 0;
}
