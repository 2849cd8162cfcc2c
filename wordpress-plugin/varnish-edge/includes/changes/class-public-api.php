<?php
/**
 * Actions other plugins and themes call to invalidate what they render.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Handlers of the public actions:
 *
 *     do_action( 'varnish_edge_purge_keys', array $keys, bool $soft = false, string $reason = '' );
 *     do_action( 'varnish_edge_purge_urls', array $urls, bool $soft = false, string $reason = '' );
 *     do_action( 'varnish_edge_purge_all', string $reason = '' );
 *
 * Keys are names without the site's namespace (`shop`, `p-42`); URLs are absolute or paths under
 * the home URL. Everything goes into the request's queue, so it is merged with the plugin's own
 * invalidations, sent once at the end of the request and kept in the outbox until delivered.
 */
class Public_Api {

	/** @var Settings */
	private $settings;

	/** @var Event_Queue */
	private $queue;

	/**
	 * Constructor.
	 */
	public function __construct( Settings $settings, Event_Queue $queue ) {
		$this->settings = $settings;
		$this->queue    = $queue;
	}

	/**
	 * Hooks: the public actions.
	 */
	public function register(): void {
		add_action( 'varnish_edge_purge_keys', array( $this, 'purge_keys' ), 10, 3 );
		add_action( 'varnish_edge_purge_urls', array( $this, 'purge_urls' ), 10, 3 );
		add_action( 'varnish_edge_purge_all', array( $this, 'purge_all' ), 10, 1 );
	}

	/**
	 * Reason recorded in the event.
	 */
	private static function reason( mixed $reason, string $default ): string {
		$reason = is_scalar( $reason ) ? sanitize_text_field( (string) $reason ) : '';
		return '' === $reason ? $default : $reason;
	}

	/**
	 * Action `varnish_edge_purge_keys`.
	 *
	 * @param string[]|string $keys   Key names (without the namespace).
	 * @param bool            $soft   Soft purge (served stale once while it refreshes).
	 * @param string          $reason Reason recorded in the event.
	 */
	public function purge_keys( mixed $keys, mixed $soft = false, mixed $reason = '' ): void {
		$scheme = new Key_Scheme( $this->settings->key_namespace() );
		$tags   = array();
		foreach ( (array) $keys as $name ) {
			if ( is_scalar( $name ) && '' !== trim( (string) $name ) ) {
				$tags[] = $scheme->custom( (string) $name );
			}
		}
		if ( $tags ) {
			$this->queue->add( ( new Invalidation() )->tags( $tags, (bool) $soft )->reason( self::reason( $reason, 'keys purged by code' ) ) );
		}
	}

	/**
	 * Action `varnish_edge_purge_urls`.
	 *
	 * @param string[]|string $urls   Absolute URLs or paths under the home URL.
	 * @param bool            $soft   Soft purge.
	 * @param string          $reason Reason recorded in the event.
	 */
	public function purge_urls( mixed $urls, mixed $soft = false, mixed $reason = '' ): void {
		$out = array();
		foreach ( (array) $urls as $url ) {
			if ( ! is_scalar( $url ) || '' === trim( (string) $url ) ) {
				continue;
			}
			$url   = trim( (string) $url );
			$out[] = preg_match( '#^https?://#i', $url ) ? $url : home_url( '/' . ltrim( $url, '/' ) );
		}
		if ( $out ) {
			// URLs on other hosts are dropped when the events are built.
			$this->queue->add( ( new Invalidation() )->urls( $out, (bool) $soft )->refresh( $out )->reason( self::reason( $reason, 'URLs purged by code' ) ) );
		}
	}

	/**
	 * Action `varnish_edge_purge_all`.
	 *
	 * @param string $reason Reason recorded in the event.
	 */
	public function purge_all( mixed $reason = '' ): void {
		$this->queue->add( ( new Invalidation() )->everything()->reason( self::reason( $reason, 'whole site purged by code' ) ) );
	}
}
