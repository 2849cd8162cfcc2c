<?php
/**
 * Turns an invalidation into protocol events.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Builds the `events` array of the webhook body (docs/protocol.md §1).
 */
class Event_Builder {

	const MAX_ITEMS   = 1000;
	const MAX_REFRESH = 50;

	/**
	 * Bytes of keys or URLs (as JSON) in one event: with 50 refresh URLs and the reason it stays
	 * well under the purger's PURGER_MAX_EVENT_BYTES (256 KiB).
	 */
	const MAX_EVENT_ITEM_BYTES = 131072;

	/**
	 * Keys and URLs in one batch past which it becomes one whole-site purge: 20 of the purger's
	 * events, 3 to 5 requests, some 3,000 PURGEKEYS on every node (a bulk action over 500 posts
	 * needs about 6,000 keys). Past it the site re-renders its pages instead.
	 */
	const MAX_BATCH_ITEMS = 20000;

	/**
	 * Events for an invalidation. Per-object keys also carry their group keys; hard entries win
	 * over soft duplicates; URLs of other hosts are dropped, this site's in the URL grammar's
	 * normalized form (Url_Grammar). Each event holds at most MAX_ITEMS keys or URLs and
	 * MAX_EVENT_ITEM_BYTES of them; past MAX_BATCH_ITEMS in all, or with a URL to purge of this
	 * site that the grammar refuses (the purger would refuse the batch), the batch is one
	 * whole-site purge. The pages to re-fetch (at most MAX_REFRESH, in priority order) ride on
	 * the last event, so a node refreshes them once it applied everything before; one the grammar
	 * refuses is dropped (logged).
	 *
	 * @param Invalidation $inv    Invalidation.
	 * @param string       $site   Normalized site host.
	 * @param Key_Scheme   $scheme Key scheme (for group keys).
	 * @param int          $now    Unix time of the change.
	 * @return array<int,array<string,mixed>>
	 */
	public static function build( Invalidation $inv, string $site, Key_Scheme $scheme, int $now ): array {
		$reason = self::reason( array_keys( $inv->reasons ) );
		$time   = gmdate( 'Y-m-d\TH:i:s\Z', $now );
		$make   = static function ( string $kind, array $fields, bool $soft ) use ( $reason, $time ): array {
			return array_merge(
				array(
					'id'   => self::event_id(),
					'kind' => $kind,
				),
				$fields,
				array(
					'soft'   => $soft,
					'reason' => $reason,
					'time'   => $time,
				)
			);
		};

		if ( $inv->all ) {
			return self::with_refresh( array( $make( 'all', array(), false ) ), $inv, $site );
		}

		$events    = array();
		$hard_tags = $scheme->with_groups( array_keys( $inv->hard_tags ) );
		$soft_tags = array_values( array_diff( $scheme->with_groups( array_keys( $inv->soft_tags ) ), $hard_tags ) );
		$refused   = array();
		$hard_urls = self::clean_urls( array_keys( $inv->hard_urls ), $site, $refused );
		$soft_urls = array_values( array_diff( self::clean_urls( array_keys( $inv->soft_urls ), $site, $refused ), $hard_urls ) );
		$prefixes  = self::clean_urls( array_keys( $inv->prefixes ), $site, $refused );
		if ( $refused ) {
			// A page of this site named so the purger cannot read it: purging everything is the
			// only invalidation sure to reach it.
			self::log_refused( $refused, 'URL to purge', 'the whole site is purged instead' );
			$all           = $make( 'all', array(), false );
			$all['reason'] = self::reason( array( 'a URL outside the protocol\'s grammar: whole site purged instead', $reason ) );
			return self::with_refresh( array( $all ), $inv, $site );
		}

		$hard_tags = self::valid_tags( $hard_tags );
		$soft_tags = self::valid_tags( $soft_tags );
		$items     = count( $hard_tags ) + count( $soft_tags ) + count( $hard_urls ) + count( $soft_urls ) + count( $prefixes );
		if ( $items > self::MAX_BATCH_ITEMS ) {
			$all = $make( 'all', array(), false );
			// The reason says why the whole site goes, before the (truncated) list of changes.
			$all['reason'] = self::reason( array( sprintf( '%d keys and URLs: whole site purged instead', $items ), $reason ) );
			return self::with_refresh( array( $all ), $inv, $site );
		}
		foreach ( self::chunks( $hard_tags ) as $chunk ) {
			$events[] = $make( 'tags', array( 'tags' => $chunk ), false );
		}
		foreach ( self::chunks( $soft_tags ) as $chunk ) {
			$events[] = $make( 'tags', array( 'tags' => $chunk ), true );
		}
		foreach ( self::chunks( $hard_urls ) as $chunk ) {
			$events[] = $make( 'urls', array( 'urls' => $chunk ), false );
		}
		foreach ( self::chunks( $soft_urls ) as $chunk ) {
			$events[] = $make( 'urls', array( 'urls' => $chunk ), true );
		}
		foreach ( self::chunks( $prefixes ) as $chunk ) {
			$events[] = $make( 'prefix', array( 'urls' => $chunk ), false );
		}
		return self::with_refresh( $events, $inv, $site );
	}

	/**
	 * Keys or URLs in chunks of at most MAX_ITEMS and MAX_EVENT_ITEM_BYTES (as JSON).
	 *
	 * @param string[] $items Keys or URLs.
	 * @return array<int,string[]>
	 */
	public static function chunks( array $items ): array {
		return Size_Packer::pack(
			$items,
			self::MAX_ITEMS,
			self::MAX_EVENT_ITEM_BYTES,
			static fn( mixed $item ): int => strlen( (string) wp_json_encode( $item, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE ) ) + 1
		);
	}

	/**
	 * Events with the invalidation's pages to re-fetch on the last one.
	 *
	 * @param array<int,array<string,mixed>> $events Events.
	 * @param Invalidation                   $inv    Invalidation.
	 * @param string                         $site   Site host.
	 * @return array<int,array<string,mixed>>
	 */
	private static function with_refresh( array $events, Invalidation $inv, string $site ): array {
		$refused = array();
		$refresh = array_slice( self::one_scheme( self::clean_urls( array_keys( $inv->refresh ), $site, $refused ) ), 0, self::MAX_REFRESH );
		if ( $refused ) {
			self::log_refused( $refused, 'refresh URL', 'dropped' );
		}
		if ( $events && $refresh ) {
			$events[ count( $events ) - 1 ]['refresh'] = $refresh;
		}
		return $events;
	}

	/**
	 * One "purge the whole site" event.
	 *
	 * @param string $reason Reason.
	 * @param int    $now    Unix time.
	 * @return array<string,mixed>
	 */
	public static function all_event( string $reason, int $now ): array {
		return array(
			'id'     => self::event_id(),
			'kind'   => 'all',
			'soft'   => false,
			'reason' => self::reason( array( $reason ) ),
			'time'   => gmdate( 'Y-m-d\TH:i:s\Z', $now ),
		);
	}

	/**
	 * Unique event id.
	 */
	public static function event_id(): string {
		return 'wp-' . bin2hex( random_bytes( 12 ) );
	}

	/**
	 * Joined reasons, at most 500 bytes of valid UTF-8.
	 *
	 * @param string[] $reasons Reasons.
	 */
	private static function reason( array $reasons ): string {
		$text = implode( '; ', $reasons );
		if ( strlen( $text ) > 500 ) {
			$text = mb_strcut( $text, 0, 496, 'UTF-8' ) . ' …';
		}
		return $text;
	}

	/**
	 * Keys of the key grammar (others would make the purger refuse the whole batch).
	 *
	 * @param string[] $tags Keys.
	 * @return string[]
	 */
	private static function valid_tags( array $tags ): array {
		return array_values( array_filter( array_map( 'strval', $tags ), array( Key_Scheme::class, 'is_valid_key' ) ) );
	}

	/**
	 * URLs of the site in the URL grammar's normalized form, once each, after the plugin's own
	 * repairs (fragment dropped, spaces and non-ASCII percent-encoded). URLs of other hosts or
	 * schemes are dropped; those `wp_parse_url()` takes for the site but the grammar refuses
	 * (`http://user@host/`, `host:/`, `host:0080`) are added to `$refused` (URL => why).
	 *
	 * @param string[]             $urls    URLs.
	 * @param string               $site    Site host.
	 * @param array<string,string> $refused URLs of the site outside the grammar, added to.
	 * @return string[]
	 */
	public static function clean_urls( array $urls, string $site, array &$refused = array() ): array {
		$out = array();
		foreach ( $urls as $url ) {
			$url = self::encoded( (string) preg_replace( '/#.*$/s', '', (string) $url ) );
			list( $normalized, $why ) = Url_Grammar::check( $url, $site );
			if ( '' !== $normalized ) {
				$out[ $normalized ] = true;
			} elseif ( preg_match( '#^https?://#i', $url ) && Settings::site_host( $url ) === $site ) {
				$refused[ $url ] = $why;
			}
		}
		return array_keys( $out );
	}

	/**
	 * A URL with spaces, control characters and non-ASCII bytes percent-encoded.
	 */
	private static function encoded( string $url ): string {
		return (string) preg_replace_callback(
			'/[^\x21-\x7e]/',
			static function ( array $m ): string {
				return rawurlencode( $m[0] );
			},
			$url
		);
	}

	/**
	 * Refresh URLs in the first one's scheme: the purger fills one copy per event (http or
	 * https), and a link written `http://` on an https site names the same page.
	 *
	 * @param string[] $urls Normalized URLs.
	 * @return string[]
	 */
	private static function one_scheme( array $urls ): array {
		if ( ! $urls ) {
			return $urls;
		}
		$scheme = strstr( $urls[0], ':', true );
		return array_values( array_unique( preg_replace( '~^https?:~', $scheme . ':', $urls ) ) );
	}

	/**
	 * Log URLs of the site the grammar refused (credentials and queries left out).
	 *
	 * @param array<string,string> $refused URL => why.
	 * @param string               $what    What the URLs were for.
	 * @param string               $outcome What became of them.
	 */
	private static function log_refused( array $refused, string $what, string $outcome ): void {
		foreach ( $refused as $url => $why ) {
			// phpcs:ignore Generic.PHP.ForbiddenFunctions.Found -- a site's own link the purger cannot read: the administrator's PHP error log is where to find it.
			error_log( sprintf( 'Varnish Edge: %s outside the protocol\'s URL grammar (%s), %s: %s', $what, $why, $outcome, Url_Grammar::redact( (string) $url ) ) );
		}
	}
}
