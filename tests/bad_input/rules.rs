//! Bad rules text: `ipvsnl::rules::parse` with `Numeric` names, each case
//! with the exact error (every bad line with its number), and the cases a
//! text parses but cannot build a table from (`Rules::to_table`).

/// Where the text fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// `rules::parse` refuses it.
    Parse,
    /// It parses; `Rules::to_table` refuses it.
    Table,
}

/// One bad text, its stage, the numbers of its bad lines and the exact
/// `Display` of the error.
pub struct Case {
    pub name: &'static str,
    pub text: &'static str,
    pub stage: Stage,
    pub lines: &'static [usize],
    pub error: &'static str,
}

/// The case of a text `parse` refuses.
const fn parse(
    name: &'static str,
    text: &'static str,
    lines: &'static [usize],
    error: &'static str,
) -> Case {
    Case {
        name,
        text,
        stage: Stage::Parse,
        lines,
        error,
    }
}

/// The case of a text that parses and `to_table` refuses.
const fn table(
    name: &'static str,
    text: &'static str,
    lines: &'static [usize],
    error: &'static str,
) -> Case {
    Case {
        stage: Stage::Table,
        ..parse(name, text, lines, error)
    }
}

/// Every bad rules text, by area.
pub const CASES: &[Case] = &[
    // Truncated lines.
    parse("-A -t", "-A -t", &[1], "line 1: -t needs a value (ADDRESS:PORT)"),
    parse("-a -t ADDR -r", "-a -t 10.0.0.1:80 -r", &[1], "line 1: -r needs a value (ADDRESS[:PORT])"),
    parse("-A alone", "-A", &[1], "line 1: -A needs a service (-t, -u or --sctp-service ADDRESS:PORT, or -f MARK)"),
    parse("-D alone", "-D", &[1], "line 1: -D needs a service (-t, -u or --sctp-service ADDRESS:PORT, or -f MARK)"),
    parse("-d without -r", "-d -t 10.0.0.1:80", &[1], "line 1: -d needs a real server (-r ADDRESS[:PORT])"),
    parse("-a without -r", "-a -t 10.0.0.1:80 -w 1", &[1], "line 1: -a needs a real server (-r ADDRESS[:PORT])"),
    parse("--tun-type without a value", "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type", &[1], "line 1: --tun-type needs a value (ipip, gue or gre)"),
    parse("--set with two values", "--set 1 2", &[1], "line 1: --set needs three timeouts in seconds (TCP TCPFIN UDP; 0 leaves one unchanged)"),
    parse("--set with four values", "--set 1 2 3 4", &[1], "line 1: unexpected argument \"4\""),
    parse("--stop-daemon without a role", "--stop-daemon", &[1], "line 1: --stop-daemon needs a value (master or backup)"),
    parse("-x without a value", "-a -t 10.0.0.1:80 -r 10.0.1.1 -x", &[1], "line 1: -x needs a value (a number)"),
    parse("a truncated address", "-A -t 10.0.0.", &[1], "line 1: service address \"10.0.0.\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"),
    parse("an unclosed bracket", "-A -t [2001:db8::1:80", &[1], "line 1: service address \"[2001:db8::1:80\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"),
    parse("a text cut mid-line", "-A -t 10.0.0.1:80 -s rr\n-a -t 10.0.0.1:80 -r 10.0.1.1:80 -m -w", &[2], "line 2: -w needs a value (a number)"),
    // Garbage.
    parse("@@@", "@@@", &[1], "line 1: \"@@@\" is not a command; a rules line starts with one of -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon"),
    parse("control bytes", "\u{1}\u{2}\u{7f}", &[1], "line 1: \"\u{1}\u{2}\u{7f}\" is not a command; a rules line starts with one of -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon"),
    parse("a NUL byte", "-C\0", &[1], "line 1: unknown option \"-C\0\""),
    parse("a lone -", "-", &[1], "line 1: \"-\" is not a command; a rules line starts with one of -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon"),
    parse("a lone --", "--", &[1], "line 1: unknown option \"--\""),
    parse("a # comment", "# saved rules\n-C", &[1], "line 1: \"#\" is not a command; a rules line starts with one of -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon"),
    parse("ipvsadm twice", "ipvsadm ipvsadm -C", &[1], "line 1: \"ipvsadm\" is not a command; a rules line starts with one of -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon"),
    parse("a word after the service", "-A -t 10.0.0.1:80 extra", &[1], "line 1: unexpected argument \"extra\""),
    parse("two commands", "-A -D -t 10.0.0.1:80", &[1], "line 1: one command per line: -D follows -A"),
    parse("a listing", "-L -n", &[1], "line 1: -L is not a command a rules text holds (only -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon)"),
    parse("a save", "-S", &[1], "line 1: -S is not a command a rules text holds (only -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon)"),
    parse("a restore", "-R", &[1], "line 1: -R is not a command a rules text holds (only -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon)"),
    parse("a help", "--help", &[1], "line 1: --help is not a command a rules text holds (only -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon)"),
    // Unknown options and options out of place.
    parse("--foo", "-A -t 10.0.0.1:80 --foo", &[1], "line 1: unknown option \"--foo\""),
    parse("-q", "-A -t 10.0.0.1:80 -q", &[1], "line 1: unknown option \"-q\""),
    parse("a short option with =", "-A -t=10.0.0.1:80", &[1], "line 1: unknown option \"-t=10.0.0.1:80\""),
    parse("bundled options", "-Ln", &[1], "line 1: unknown option \"-Ln\""),
    parse("a value to a flag", "-A -u 10.0.0.1:53 --ops=1", &[1], "line 1: --ops takes no value"),
    parse("-w on -A", "-A -t 10.0.0.1:80 -w 1", &[1], "line 1: -w does not apply to -A"),
    parse("-s on -Z", "-Z -t 10.0.0.1:80 -s rr", &[1], "line 1: -s does not apply to -Z"),
    parse("a listing option on -C", "-C --numeric", &[1], "line 1: --numeric does not apply to -C"),
    parse("-s twice", "-A -t 10.0.0.1:80 -s rr -s wlc", &[1], "line 1: -s is given twice"),
    parse("-M twice", "-E -f 5 -6 -M 64 -M 32", &[1], "line 1: -M is given twice"),
    parse("two services", "-A -t 10.0.0.1:80 -u 10.0.0.1:80", &[1], "line 1: -u conflicts with -t: a line takes only one of them"),
    parse("two methods", "-a -t 10.0.0.1:80 -r 10.0.1.1 -g -m", &[1], "line 1: -m conflicts with -g: a line takes only one of them"),
    parse("two checksum options", "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-nocsum --tun-csum", &[1], "line 1: --tun-csum conflicts with --tun-nocsum: a line takes only one of them"),
    parse("-M without -p", "-A -t 10.0.0.1:80 -M 255.255.255.0", &[1], "line 1: -M needs -p: a netmask is the granularity of persistence"),
    parse("--netmask without -p on -E", "-E -f 3 -6 --netmask 64", &[1], "line 1: --netmask needs -p: a netmask is the granularity of persistence"),
    parse("-6 on an address service", "-A -t 10.0.0.1:80 -6", &[1], "line 1: -6 is only for fwmark services; -t takes its family from its address"),
    // Numbers out of range.
    parse("weight WEIGHT_MAX + 1", "-a -t 10.0.0.1:80 -r 10.0.1.1:80 -w 2147483648", &[1], "line 1: weight \"2147483648\" is not a number from 0 to 2147483647"),
    parse("weight -1", "-a -t 10.0.0.1:80 -r 10.0.1.1:80 -w -1", &[1], "line 1: weight \"-1\" is not a number from 0 to 2147483647"),
    parse("weight 1e3", "-a -t 10.0.0.1:80 -r 10.0.1.1:80 -w 1e3", &[1], "line 1: weight \"1e3\" is not a number from 0 to 2147483647"),
    parse("upper threshold THRESHOLD_MAX + 1", "-a -t 10.0.0.1:80 -r 10.0.1.1 -x 2147483648", &[1], "line 1: upper threshold \"2147483648\" is not a number from 0 to 2147483647"),
    parse("lower threshold -5", "-a -t 10.0.0.1:80 -r 10.0.1.1 -x 10 -y -5", &[1], "line 1: lower threshold \"-5\" is not a number from 0 to 2147483647"),
    parse("lower above upper", "-a -t 10.0.0.1:80 -r 10.0.1.1 -x 10 -y 20", &[1], "line 1: invalid thresholds: lower threshold 20 is above upper threshold 10 (0 means no upper threshold, so a lower one needs an upper one)"),
    parse("-p -1", "-A -t 10.0.0.1:80 -p -1", &[1], "line 1: unexpected argument \"-1\""),
    parse("-p 2^32", "-A -t 10.0.0.1:80 -p 4294967296", &[1], "line 1: persistence timeout \"4294967296\" is not a number from 0 to 4294967295"),
    parse("-p abc", "-A -t 10.0.0.1:80 -p abc", &[1], "line 1: persistence timeout \"abc\" is not a number from 0 to 4294967295"),
    parse("service port 65536", "-A -t 10.0.0.1:65536", &[1], "line 1: service address \"10.0.0.1:65536\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"),
    parse("server port 65536", "-a -t 10.0.0.1:80 -r 10.0.1.1:65536", &[1], "line 1: real server address \"10.0.1.1:65536\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"),
    parse("service port 0", "-A -t 10.0.0.1:0", &[1], "line 1: TCP 10.0.0.1:0 has port 0, which only a persistent service (-p) may have"),
    parse("service without a port", "-A --sctp-service 10.0.0.1", &[1], "line 1: SCTP 10.0.0.1:0 has port 0, which only a persistent service (-p) may have"),
    parse("address octet 300", "-A -t 10.0.0.300:80", &[1], "line 1: service address \"10.0.0.300:80\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"),
    parse("fwmark 0", "-A -f 0", &[1], "line 1: firewall mark \"0\" is not a number from 1 to 4294967295 (decimal, 0x hex, or negative as printed for marks above 2147483647)"),
    parse("fwmark 2^32", "-A -f 4294967296", &[1], "line 1: firewall mark \"4294967296\" is not a number from 1 to 4294967295 (decimal, 0x hex, or negative as printed for marks above 2147483647)"),
    parse("fwmark -2^31 - 1", "-A -f -2147483649", &[1], "line 1: firewall mark \"-2147483649\" is not a number from 1 to 4294967295 (decimal, 0x hex, or negative as printed for marks above 2147483647)"),
    parse("fwmark 0x", "-A -f 0x", &[1], "line 1: firewall mark \"0x\" is not a number from 1 to 4294967295 (decimal, 0x hex, or negative as printed for marks above 2147483647)"),
    parse("-M 33", "-A -t 10.0.0.1:80 -M 33", &[1], "line 1: IPv4 netmask \"33\" is not a dotted mask such as 255.255.255.0"),
    parse("-M 256.0.0.0", "-A -t 10.0.0.1:80 -M 256.0.0.0", &[1], "line 1: IPv4 netmask \"256.0.0.0\" is not a dotted mask such as 255.255.255.0"),
    parse("-M 129 on IPv6", "-A -t [2001:db8::1]:80 -M 129", &[1], "line 1: IPv6 netmask \"129\" is not a number from 1 to 128"),
    parse("-M 0 on IPv6", "-A -t [2001:db8::1]:80 -M 0", &[1], "line 1: IPv6 netmask \"0\" is not a number from 1 to 128"),
    parse("dotted -M on IPv6", "-A -f 1 -6 -M 255.255.255.0", &[1], "line 1: IPv6 netmask \"255.255.255.0\" is not a number from 1 to 128"),
    parse("IPv6 -M on IPv4", "-A -t 10.0.0.1:80 -M 2001:db8::", &[1], "line 1: IPv4 netmask \"2001:db8::\" is not a dotted mask such as 255.255.255.0"),
    parse("--tun-port 65536", "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gue --tun-port 65536", &[1], "line 1: tunnel port \"65536\" is not a number from 1 to 65535"),
    parse("--set 2^32", "--set 1 2 4294967296", &[1], "line 1: UDP timeout \"4294967296\" is not a number from 0 to 2147483647"),
    parse("--set above INT_MAX", "--set 2147483648 0 0", &[1], "line 1: TCP timeout \"2147483648\" is not a number from 0 to 2147483647"),
    parse("--set letters", "--set a b c", &[1], "line 1: TCP timeout \"a\" is not a number from 0 to 2147483647"),
    parse("--syncid 256", "--start-daemon master --syncid 256", &[1], "line 1: sync id \"256\" is not a number from 0 to 255"),
    parse("--sync-maxlen 65536", "--start-daemon master --sync-maxlen 65536", &[1], "line 1: sync message length \"65536\" is not a number from 1 to 65507"),
    parse("--mcast-ttl 0", "--start-daemon master --mcast-ttl 0", &[1], "line 1: multicast TTL \"0\" is not a number from 1 to 255"),
    parse("--mcast-ttl 256", "--start-daemon backup --mcast-ttl 256", &[1], "line 1: multicast TTL \"256\" is not a number from 1 to 255"),
    parse("--mcast-port 65536", "--start-daemon master --mcast-port 65536", &[1], "line 1: multicast port \"65536\" is not a number from 1 to 65535"),
    // Names.
    parse("scheduler of 16 bytes", "-A -t 10.0.0.1:80 -s 1234567890123456", &[1], "line 1: scheduler \"1234567890123456\" is not a name of 1 to 15 bytes of printable ASCII"),
    parse("non-ASCII scheduler", "-A -t 10.0.0.1:80 -s r\u{e9}", &[1], "line 1: scheduler \"r\u{e9}\" is not a name of 1 to 15 bytes of printable ASCII"),
    parse("empty engine", "-A -t 10.0.0.1:80 -p --pe=", &[1], "line 1: persistence engine \"\" is not a name of 1 to 15 bytes of printable ASCII"),
    parse("engine of 16 bytes", "-A -t 10.0.0.1:80 -p --pe sipsipsipsipsips", &[1], "line 1: persistence engine \"sipsipsipsipsips\" is not a name of 1 to 15 bytes of printable ASCII"),
    parse("interface of 16 bytes", "--start-daemon master --mcast-interface eeeeeeeeeeeeeeee", &[1], "line 1: multicast interface \"eeeeeeeeeeeeeeee\" is not a name of 1 to 15 bytes without NUL or white space"),
    parse("empty interface", "--start-daemon master --mcast-interface=", &[1], "line 1: multicast interface \"\" is not a name of 1 to 15 bytes without NUL or white space"),
    parse("an unknown role", "--start-daemon sideways", &[1], "line 1: sync daemon role \"sideways\" is not master or backup"),
    parse("a unicast group", "--start-daemon master --mcast-group 10.0.0.1", &[1], "line 1: multicast group \"10.0.0.1\" is not an IPv4 or IPv6 multicast address"),
    parse("a host name (Numeric)", "-A -t localhost:80", &[1], "line 1: service address \"localhost:80\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"),
    parse("a port name (Numeric)", "-A -t 10.0.0.1:http", &[1], "line 1: service address \"10.0.0.1:http\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"),
    // Impossible combinations.
    parse("a flag of another scheduler", "-A -t 10.0.0.1:80 -s rr -b sh-port", &[1], "line 1: scheduler flag \"sh-port\" is for the sh scheduler, not rr"),
    parse("an unknown scheduler flag", "-A -t 10.0.0.1:80 -s sh -b bogus", &[1], "line 1: scheduler flag \"bogus\" is not one of flag-1, flag-2, flag-3, sh-fallback, sh-port, mh-fallback, mh-port"),
    parse("IPv6 server of an IPv4 service", "-a -t 10.0.0.1:80 -r [2001:db8::2]:80 -m", &[1], "line 1: invalid destination: IPv6 destination 2001:db8::2 on an IPv4 service needs tunnel forwarding"),
    parse("GUE without a port", "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type gue", &[1], "line 1: a gue tunnel needs --tun-port PORT"),
    parse("IPIP with a port", "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type ipip --tun-port 6080", &[1], "line 1: --tun-port is only for gue tunnels, not ipip"),
    parse("an unknown tunnel", "-a -t 10.0.0.1:80 -r 10.0.1.1 -i --tun-type foo", &[1], "line 1: tunnel type \"foo\" is not ipip, gue or gre"),
    parse("a tunnel type without -i", "-a -t 10.0.0.1:80 -r 10.0.1.1 -m --tun-type gue --tun-port 1", &[1], "line 1: --tun-type is only for tunnelled real servers (-i)"),
    parse("server 0.0.0.0", "-a -t 10.0.0.1:80 -r 0.0.0.0", &[1], "line 1: invalid destination: 0.0.0.0 is not a unicast address"),
    parse("server 224.0.0.1", "-a -t 10.0.0.1:80 -r 224.0.0.1", &[1], "line 1: invalid destination: 224.0.0.1 is not a unicast address"),
    // Every bad line is reported, good lines between them or not.
    parse("three bad lines of five", "-C\n-A -t\n\n-Z --foo\n-A -f 0", &[2, 4, 5], "line 2: -t needs a value (ADDRESS:PORT)\nline 4: unknown option \"--foo\"\nline 5: firewall mark \"0\" is not a number from 1 to 4294967295 (decimal, 0x hex, or negative as printed for marks above 2147483647)"),
    parse("CRLF line ends", "-C\r\n-A -t 10.0.0.1:80 -s\r\n", &[2], "line 2: -s needs a value (a scheduler name)"),
    // Texts that parse but build no table.
    table("-E of an unknown service", "-E -t 10.0.0.1:80", &[1], "line 1: -E names TCP 10.0.0.1:80, which no earlier line adds"),
    table("-a to an unknown service", "-a -t 10.0.0.1:80 -r 10.0.1.1", &[1], "line 1: -a names TCP 10.0.0.1:80, which no earlier line adds"),
    table("-D of an unknown service", "-D -t 10.0.0.1:80", &[1], "line 1: -D names TCP 10.0.0.1:80, which no earlier line adds"),
    table("-Z of an unknown service", "-Z -t 10.0.0.1:80", &[1], "line 1: -Z names TCP 10.0.0.1:80, which no earlier line adds"),
    table("a service added twice", "-A -t 10.0.0.1:80\n-A -t 10.0.0.1:80", &[2], "line 2: -A adds TCP 10.0.0.1:80, which line 1 already adds"),
    table("a server added twice", "-A -t 10.0.0.1:80\n-a -t 10.0.0.1:80 -r 10.0.1.1\n-a -t 10.0.0.1:80 -r 10.0.1.1", &[3], "line 3: -a adds real server 10.0.1.1:80 to TCP 10.0.0.1:80, which line 2 already adds"),
    table("-e of an unknown server", "-A -t 10.0.0.1:80\n-e -t 10.0.0.1:80 -r 10.0.1.1", &[2], "line 2: -e names real server 10.0.1.1:80 of TCP 10.0.0.1:80, which no earlier line adds"),
    table("-d of an unknown server", "-A -t 10.0.0.1:80\n-d -t 10.0.0.1:80 -r 10.0.1.1", &[2], "line 2: -d names real server 10.0.1.1:80 of TCP 10.0.0.1:80, which no earlier line adds"),
    table("-a after -D", "-A -t 10.0.0.1:80\n-D -t 10.0.0.1:80\n-a -t 10.0.0.1:80 -r 10.0.1.1", &[3], "line 3: -a names TCP 10.0.0.1:80, which no earlier line adds"),
    table("-E after -C", "-A -t 10.0.0.1:80\n-C\n-E -t 10.0.0.1:80", &[3], "line 3: -E names TCP 10.0.0.1:80, which no earlier line adds"),
    table("-E of the other family's mark", "-A -f 1\n-A -f 1 -6\n-E -f 2", &[3], "line 3: -E names fwmark 2 (IPv4), which no earlier line adds"),
    table("--set", "--set 1 2 3", &[1], "line 1: --set does not change the service table (a table is built from -A -E -D -a -e -d -C -Z only)"),
    table("--start-daemon", "--start-daemon master", &[1], "line 1: --start-daemon does not change the service table (a table is built from -A -E -D -a -e -d -C -Z only)"),
    table("--stop-daemon", "--stop-daemon backup", &[1], "line 1: --stop-daemon does not change the service table (a table is built from -A -E -D -a -e -d -C -Z only)"),
];

/// Bytes that are not UTF-8: `rules::parse` takes `&str`, so they are
/// refused before parsing (`str::from_utf8`); `ipvsadm -R` reads its input
/// lossily (`String::from_utf8_lossy`), and the replacement characters
/// then fail the line that holds them.
pub const NOT_UTF8: &[(&str, &[u8], &str)] = &[
    ("a lone 0xff", b"\xff", "line 1: \"\u{fffd}\" is not a command; a rules line starts with one of -A -E -D -a -e -d -C -Z --set --start-daemon --stop-daemon"),
    ("a Latin-1 scheduler", b"-A -t 10.0.0.1:80 -s r\xe9", "line 1: scheduler \"r\u{fffd}\" is not a name of 1 to 15 bytes of printable ASCII"),
    ("a cut UTF-8 sequence in an engine", b"-C\n-A -t 10.0.0.1:80 -p --pe s\xc3", "line 2: persistence engine \"s\u{fffd}\" is not a name of 1 to 15 bytes of printable ASCII"),
    ("an overlong NUL in an option", b"-A -t 10.0.0.1:80 -\xc0\x80", "line 1: unknown option \"-\u{fffd}\u{fffd}\""),
    ("a surrogate in an address", b"-A -t 10.0.0.1:8\xed\xa0\x80", "line 1: service address \"10.0.0.1:8\u{fffd}\u{fffd}\u{fffd}\" is not an address with an optional port (10.0.0.1:80, [2001:db8::1]:80 or a host name)"),
];
