<?php
/**
 * The protocol's URL grammar.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * The one grammar of the URLs of an event (`urls`, `prefix`, `refresh`), the purger's
 * (purger/src/model/normalize.ts; both are tested against testdata/url-grammar.json): an
 * absolute http(s) URL of the site, printable ASCII, at most MAX_LENGTH characters, no backslash,
 * no credentials, a port 1-65535 written without leading zeros; its host[:port] normalized like
 * a site (lower-case, one trailing dot dropped, :80 and :443 dropped) equals the site. Read
 * literally, as the purger reads it: `wp_parse_url()` takes `http://user@host/`, `host:/` and
 * `host:0080` for the site, the purger does not.
 */
class Url_Grammar {

	/**
	 * Longest URL of an event.
	 */
	const MAX_LENGTH = 2048;

	/**
	 * Scheme, authority, path and query of an absolute URL (the fragment is left out).
	 */
	const ABSOLUTE_URL = '~^([A-Za-z][A-Za-z0-9+.-]*)://([^/?#]*)([^#]*)~';

	/**
	 * Host and port of an authority (lower-cased): a port is 1-65535 without leading zeros.
	 */
	const AUTHORITY = '~^([a-z0-9.-]+?)\.?(?::([1-9][0-9]{0,4}))?$~D';

	/**
	 * The URL in its normalized form (`http(s)://<site><path+query>`, no fragment) and, when it is
	 * outside the grammar, why instead (the URL is then '').
	 *
	 * @param string $url  URL as written.
	 * @param string $site Normalized site host[:port].
	 * @return array{0:string,1:string} Normalized URL and '', or '' and why.
	 */
	public static function check( string $url, string $site ): array {
		if ( strlen( $url ) > self::MAX_LENGTH ) {
			return array( '', sprintf( 'too long: at most %d characters', self::MAX_LENGTH ) );
		}
		if ( ! preg_match( '/^[\x21-\x7e]+$/D', $url ) ) {
			return array( '', 'not printable ASCII without spaces' );
		}
		if ( str_contains( $url, '\\' ) ) {
			return array( '', 'contains a backslash' );
		}
		if ( ! preg_match( self::ABSOLUTE_URL, $url, $m ) ) {
			return array( '', 'not an absolute URL' );
		}
		$scheme = strtolower( $m[1] );
		if ( 'http' !== $scheme && 'https' !== $scheme ) {
			return array( '', 'scheme is not http or https' );
		}
		if ( str_contains( $m[2], '@' ) ) {
			return array( '', 'has credentials' );
		}
		$host = self::host( $m[2] );
		if ( null === $host ) {
			return array( '', 'not a host[:port] (a port is 1-65535, without leading zeros)' );
		}
		if ( $host !== $site ) {
			return array( '', 'host is not the site' );
		}
		return array( $scheme . '://' . $site . self::path( $m[3] ), '' );
	}

	/**
	 * Host[:port] of an authority normalized like a site, or null.
	 */
	private static function host( string $authority ): ?string {
		if ( ! preg_match( self::AUTHORITY, strtolower( $authority ), $m ) ) {
			return null;
		}
		$port = $m[2] ?? '';
		if ( '' !== $port && (int) $port > 65535 ) {
			return null;
		}
		return in_array( $port, array( '', '80', '443' ), true ) ? $m[1] : $m[1] . ':' . $port;
	}

	/**
	 * Path and query as written: `/` for none, `/?q` for a query alone.
	 */
	private static function path( string $rest ): string {
		if ( '' === $rest ) {
			return '/';
		}
		return '?' === $rest[0] ? '/' . $rest : $rest;
	}

	/**
	 * A URL as a log line may show it: credentials and query replaced by `…`, at most 200 bytes.
	 */
	public static function redact( string $url ): string {
		$url = (string) preg_replace( '~^([^:/?#]*://)[^/?#]*@~', '$1…@', $url );
		$url = (string) preg_replace( '~#.*$~s', '', (string) preg_replace( '~\?.*$~s', '?…', $url ) );
		return strlen( $url ) > 200 ? substr( $url, 0, 200 ) . '…' : $url;
	}
}
