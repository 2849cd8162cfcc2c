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
	const MAX_URLLEN  = 2048;
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
	 * over soft duplicates; URLs of other hosts are dropped. Each event holds at most MAX_ITEMS
	 * keys or URLs and MAX_EVENT_ITEM_BYTES of them; past MAX_BATCH_ITEMS in all the batch is one
	 * whole-site purge. The pages to re-fetch (at most MAX_REFRESH, in priority order) ride on
	 * the last event, so a node refreshes them once it applied everything before.
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
		$hard_urls = self::clean_urls( array_keys( $inv->hard_urls ), $site );
		$soft_urls = array_values( array_diff( self::clean_urls( array_keys( $inv->soft_urls ), $site ), $hard_urls ) );
		$prefixes  = self::clean_urls( array_keys( $inv->prefixes ), $site );

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
		$refresh = array_slice( self::clean_urls( array_keys( $inv->refresh ), $site ), 0, self::MAX_REFRESH );
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
	 * Absolute http(s) URLs on the site host, non-ASCII percent-encoded, fragments dropped.
	 *
	 * @param string[] $urls URLs.
	 * @param string   $site Site host.
	 * @return string[]
	 */
	public static function clean_urls( array $urls, string $site ): array {
		$out = array();
		foreach ( $urls as $url ) {
			$url = preg_replace( '/#.*$/s', '', (string) $url );
			$url = preg_replace_callback(
				'/[^\x21-\x7e]/',
				static function ( array $m ): string {
					return rawurlencode( $m[0] );
				},
				$url
			);
			if ( ! preg_match( '#^https?://#i', $url ) || strlen( $url ) > self::MAX_URLLEN ) {
				continue;
			}
			if ( Settings::site_host( $url ) !== $site ) {
				continue;
			}
			$out[ $url ] = true;
		}
		return array_keys( $out );
	}
}
