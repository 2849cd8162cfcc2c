<?php
/**
 * What WordPress's own Site Health "Page cache" test counts as a cache.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Teaches core's page-cache test (`WP_Site_Health::get_test_page_cache()`, WordPress 6.1+) the
 * headers that show this cache, through `site_status_page_cache_supported_cache_headers`.
 *
 * Core GETs `home_url( '/' )` three times from the server itself and looks for known headers.
 * That loopback reaches either Varnish, or (often: the origin's own hosts file names itself) the
 * origin directly, so two kinds of proof count:
 *
 * - Varnish's own headers, when the loopback goes through the edge: `X-Varnish` (`X-Vinyl` on
 *   Vinyl Cache; one id on a miss, two on a hit), `Age` (only caches send it; core skips an
 *   `Age: 0` as empty before any callback, so it counts once the copy is a second old), and `Via`
 *   naming Varnish or Vinyl Cache (the only one of them the shipped VCL shows clients outside its
 *   `purgers` ACL).
 * - The origin's `xkey` header naming keys of this site's namespace, which only this plugin
 *   writes and Varnish strips before a client sees it: the page is tagged for the edge cache.
 *   It counts only while the purge pipeline is configured (purger URL and secret), when pages
 *   also get their long `Surrogate-Control` TTL; an unconfigured plugin claims no cache.
 *
 * Core calls each callback through `array_filter()` with one header value (a string) and counts
 * the header when a callback returns true for one of its values, or when its entry is empty
 * (null, or '' as WordPress 6.1 writes it: presence is enough). Core's own entries are never
 * narrowed: where core already checks a header, its callback still counts beside this one.
 */
class Page_Cache_Headers {

	/** @var Settings */
	private $settings;

	/**
	 * Constructor.
	 *
	 * @param Settings $settings Whether the pipeline is configured, and the key namespace.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * Hooks: core's list of page-cache headers.
	 */
	public function register(): void {
		add_filter( 'site_status_page_cache_supported_cache_headers', array( $this, 'add_headers' ) );
	}

	/**
	 * Filter `site_status_page_cache_supported_cache_headers`.
	 *
	 * @param mixed $headers Lower-case header name => callback, or null/'' (presence counts).
	 * @return array<string,mixed>
	 */
	public function add_headers( mixed $headers ): array {
		$headers = is_array( $headers ) ? $headers : array();
		$ours    = array(
			'x-varnish' => array( self::class, 'is_varnish_id' ),
			'x-vinyl'   => array( self::class, 'is_varnish_id' ),
			'age'       => array( self::class, 'is_age' ),
			'via'       => array( self::class, 'is_varnish_via' ),
			'xkey'      => array( $this, 'is_own_key_header' ),
		);
		foreach ( $ours as $name => $callback ) {
			$headers[ $name ] = self::either( $headers, $name, $callback );
		}
		return $headers;
	}

	/**
	 * Core's entry for a header widened by ours: presence-only entries stay as they are, a
	 * callback counts beside ours, a missing or unusable entry becomes ours.
	 *
	 * @param array<string,mixed> $headers  Core's list.
	 * @param string              $name     Header name.
	 * @param callable            $callback Our check.
	 */
	private static function either( array $headers, string $name, callable $callback ): mixed {
		if ( ! array_key_exists( $name, $headers ) ) {
			return $callback;
		}
		$core = $headers[ $name ];
		if ( empty( $core ) ) {
			return $core;
		}
		if ( ! is_callable( $core ) ) {
			return $callback;
		}
		return static function ( mixed $value ) use ( $core, $callback ): bool {
			return (bool) call_user_func( $callback, $value ) || (bool) call_user_func( $core, $value );
		};
	}

	/**
	 * `X-Varnish` / `X-Vinyl`: the request id, and the id of the request that stored the object
	 * on a hit. Varnish adds it to every response it delivers, so the loopback went through it.
	 *
	 * @param mixed $value Header value.
	 */
	public static function is_varnish_id( mixed $value ): bool {
		return is_string( $value ) && 1 === preg_match( '/^\s*\d+(?:\s+\d+)*\s*$/D', $value );
	}

	/**
	 * `Age` in seconds: only a cache sends it (RFC 9111 §5.1). Core passes no `0` here (it skips
	 * empty values), so this is core's own check, kept when another filter dropped it.
	 *
	 * @param mixed $value Header value.
	 */
	public static function is_age( mixed $value ): bool {
		return is_string( $value ) && 1 === preg_match( '/^\s*\d+\s*$/D', $value );
	}

	/**
	 * `Via` with an entry Varnish or Vinyl Cache wrote: `1.1 varnish (Varnish/7.1)`,
	 * `1.1 edge-a (Varnish/7.7)`, `1.1 edge-a (Vinyl-Cache/9.0)`.
	 *
	 * @param mixed $value Header value.
	 */
	public static function is_varnish_via( mixed $value ): bool {
		return is_string( $value ) && 1 === preg_match( '/\((?:Varnish|Vinyl-Cache)\/[0-9][0-9.]*\)/i', $value );
	}

	/**
	 * `xkey` naming at least one key of this site's namespace, while the purge pipeline is
	 * configured (the page then also has its long TTL for the edge).
	 *
	 * @param mixed $value Header value (one `xkey` line).
	 */
	public function is_own_key_header( mixed $value ): bool {
		if ( ! is_string( $value ) || ! $this->settings->is_configured() ) {
			return false;
		}
		$prefix = $this->settings->key_namespace() . '-';
		foreach ( preg_split( '/[\s,]+/', $value, -1, PREG_SPLIT_NO_EMPTY ) as $key ) {
			if ( 0 === strpos( $key, $prefix ) && Key_Scheme::is_valid_key( $key ) ) {
				return true;
			}
		}
		return false;
	}
}
