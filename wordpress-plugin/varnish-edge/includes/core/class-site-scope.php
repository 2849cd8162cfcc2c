<?php
/**
 * What "the whole site" means for this site.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * A protocol `all` event bans everything cached for the host. A site whose home is not at the root
 * of its host (a sub-site of a subdirectory multisite, a single site installed under /blog/)
 * shares that host with other sites, so its whole-site purges become a ban on its own path prefix.
 */
class Site_Scope {

	/**
	 * The URL prefix that confines a whole-site purge of the current site, or '' when the site
	 * owns its whole host (home at the host's root).
	 */
	public static function prefix(): string {
		$home = home_url( '/' );
		$path = (string) wp_parse_url( $home, PHP_URL_PATH );
		if ( '' === trim( $path, '/' ) ) {
			return '';
		}
		return trailingslashit( $home );
	}

	/**
	 * Events with every `all` event of a site that shares its host replaced by a `prefix` event on
	 * the site's home (same id, reason and time).
	 *
	 * @param array<int,array<string,mixed>> $events Events.
	 * @return array<int,array<string,mixed>>
	 */
	public static function confine( array $events ): array {
		$prefix = self::prefix();
		if ( '' === $prefix ) {
			return $events;
		}
		foreach ( $events as $i => $event ) {
			if ( isset( $event['kind'] ) && 'all' === $event['kind'] ) {
				$events[ $i ]['kind'] = 'prefix';
				$events[ $i ]['urls'] = array( $prefix );
			}
		}
		return $events;
	}

	/**
	 * One whole-site purge event for this site.
	 *
	 * @param int $now Unix time.
	 * @return array<string,mixed>
	 */
	public static function whole_site_event( string $reason, int $now ): array {
		$events = self::confine( array( Event_Builder::all_event( $reason, $now ) ) );
		return $events[0];
	}

	/**
	 * Whether events only purge the whole site (nothing narrower to fall back from).
	 *
	 * @param array<int,array<string,mixed>> $events Events.
	 */
	public static function only_whole_site( array $events ): bool {
		$prefix = self::prefix();
		foreach ( $events as $event ) {
			$kind = $event['kind'] ?? '';
			if ( 'all' === $kind || ( '' !== $prefix && 'prefix' === $kind && array( $prefix ) === ( $event['urls'] ?? null ) ) ) {
				continue;
			}
			return false;
		}
		return array() !== $events;
	}
}
