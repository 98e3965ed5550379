/**
 * URLs whose host the address policy refuses (SVC_PRIVATE_ADDRESSES=deny), each with what the refusal must name, in
 * the spellings an attacker would try: odd IPv4 forms the URL parser normalizes, every IPv6 form that embeds an IPv4
 * address, and loopback names. `PUBLIC_FORMS` sit just beside them and must pass. Shared by the unit test of the
 * policy and the fetcher (src/shared/egress) and the flow test of every surface that takes such a URL.
 */
export const REFUSED_FORMS: ReadonlyArray<{ url: string; names: RegExp }> = [
  // IPv4 loopback, and the spellings WHATWG URL parsing turns into it
  { url: 'http://127.0.0.1/', names: /127\.0\.0\.1 is a loopback address/ },
  { url: 'https://127.0.0.1:8443/.well-known/jwks.json', names: /127\.0\.0\.1 is a loopback address/ },
  { url: 'http://127.255.255.254/', names: /loopback/ },
  { url: 'http://2130706433/', names: /127\.0\.0\.1 is a loopback address/ },
  { url: 'http://0x7f.1/', names: /127\.0\.0\.1 is a loopback address/ },
  { url: 'http://0x7f000001/', names: /127\.0\.0\.1 is a loopback address/ },
  { url: 'http://0177.0.0.1/', names: /127\.0\.0\.1 is a loopback address/ },
  { url: 'http://127.1/', names: /127\.0\.0\.1 is a loopback address/ },
  { url: 'http://127.0.0.1./', names: /127\.0\.0\.1 is a loopback address/ },
  // private, link-local (cloud metadata), CGNAT
  { url: 'http://10.0.0.1/', names: /10\.0\.0\.1 is a private address/ },
  { url: 'http://10.255.1.2:9000/hook', names: /private/ },
  { url: 'http://172.16.0.1/', names: /private/ },
  { url: 'http://172.31.255.255/', names: /private/ },
  { url: 'http://192.168.1.1/', names: /private/ },
  { url: 'http://169.254.169.254/latest/meta-data/', names: /169\.254\.169\.254 is a link-local address/ },
  { url: 'http://169.254.1.1/', names: /link-local/ },
  { url: 'http://100.64.0.1/', names: /carrier-grade NAT/ },
  { url: 'http://100.127.255.254/', names: /carrier-grade NAT/ },
  // 0.0.0.0/8, multicast, broadcast, reserved
  { url: 'http://0.0.0.0/', names: /0\.0\.0\.0 is an unspecified address/ },
  { url: 'http://0/', names: /0\.0\.0\.0 is an unspecified address/ },
  { url: 'http://0.1.2.3/', names: /unspecified/ },
  { url: 'http://224.0.0.1/', names: /multicast/ },
  { url: 'http://239.255.255.250/', names: /multicast/ },
  { url: 'http://255.255.255.255/', names: /broadcast/ },
  { url: 'http://240.0.0.1/', names: /reserved/ },
  { url: 'http://198.18.0.1/', names: /reserved/ },
  // IPv6 loopback, unspecified, unique-local, link-local, multicast, site-local
  { url: 'http://[::1]/', names: /::1 is a loopback address/ },
  { url: 'http://[0:0:0:0:0:0:0:1]:8080/', names: /::1 is a loopback address/ },
  { url: 'http://[::]/', names: /unspecified/ },
  { url: 'http://[fc00::1]/', names: /unique-local/ },
  { url: 'http://[fd12:3456::1]/', names: /unique-local/ },
  { url: 'http://[fe80::1]/', names: /link-local/ },
  { url: 'http://[febf::1]/', names: /link-local/ },
  { url: 'http://[ff02::1]/', names: /multicast/ },
  { url: 'http://[fec0::1]/', names: /site-local/ },
  // IPv6 forms that embed a refused IPv4 address
  { url: 'http://[::ffff:127.0.0.1]/', names: /127\.0\.0\.1 \(IPv4-mapped\), a loopback address/ },
  { url: 'http://[::ffff:7f00:1]/', names: /IPv4-mapped/ },
  { url: 'http://[::ffff:169.254.169.254]/', names: /169\.254\.169\.254 \(IPv4-mapped\), a link-local address/ },
  { url: 'http://[::ffff:10.0.0.1]/', names: /10\.0\.0\.1 \(IPv4-mapped\), a private address/ },
  { url: 'http://[::127.0.0.1]/', names: /127\.0\.0\.1 \(IPv4-compatible\), a loopback address/ },
  { url: 'http://[::10.1.2.3]/', names: /10\.1\.2\.3 \(IPv4-compatible\), a private address/ },
  { url: 'http://[::ffff:0:127.0.0.1]/', names: /127\.0\.0\.1 \(IPv4-translated\), a loopback address/ },
  { url: 'http://[64:ff9b::7f00:1]/', names: /127\.0\.0\.1 \(NAT64\), a loopback address/ },
  { url: 'http://[64:ff9b::169.254.169.254]/', names: /169\.254\.169\.254 \(NAT64\), a link-local address/ },
  { url: 'http://[64:ff9b::a00:1]/', names: /10\.0\.0\.1 \(NAT64\), a private address/ },
  { url: 'http://[64:ff9b:1::a00:1]/', names: /local-use NAT64/ },
  { url: 'http://[2002:7f00:1::]/', names: /127\.0\.0\.1 \(6to4\), a loopback address/ },
  { url: 'http://[2002:a9fe:a9fe::1]/', names: /169\.254\.169\.254 \(6to4\), a link-local address/ },
  { url: 'http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/', names: /127\.0\.0\.1 \(Teredo\), a loopback address/ },
  // loopback names
  { url: 'http://localhost/', names: /localhost is a loopback name/ },
  { url: 'http://LOCALHOST:8080/x', names: /localhost is a loopback name/ },
  { url: 'http://localhost./', names: /localhost\. is a loopback name/ },
  { url: 'http://api.localhost/', names: /api\.localhost is a loopback name/ },
  { url: 'https://a.b.localhost./jwks', names: /a\.b\.localhost\. is a loopback name/ },
];

/** Hosts right beside refused ranges, and IPv6 forms embedding a public IPv4 address: allowed. */
export const PUBLIC_FORMS: readonly string[] = [
  'https://example.com/hook',
  'http://8.8.8.8/',
  'http://100.128.0.1/',
  'http://172.32.0.1/',
  'http://192.169.0.1/',
  'http://169.255.0.1/',
  'http://[2606:4700:4700::1111]/',
  'http://[::ffff:8.8.8.8]/',
  'http://[64:ff9b::808:808]/',
  'http://[2002:808:808::1]/',
];
