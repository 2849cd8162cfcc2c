<?php
/**
 * Purges requested by people (admin bar, settings page, WP-CLI).
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Builds invalidations for explicit purge requests and explains what an edit would purge.
 */
class Manual_Purge {

	/** @var Settings */
	private $settings;

	/** @var Change_Detector */
	private $detector;

	/**
	 * Constructor.
	 *
	 * @param Settings        $settings Settings.
	 * @param Change_Detector $detector Rules.
	 */
	public function __construct( Settings $settings, Change_Detector $detector ) {
		$this->settings = $settings;
		$this->detector = $detector;
	}

	/**
	 * The whole site.
	 *
	 * @param string $who Who asked.
	 * @return Invalidation
	 */
	public function all( $who ) {
		return ( new Invalidation() )->everything()->reason( 'manual purge of the whole site by ' . $who );
	}

	/**
	 * One URL of this site.
	 *
	 * @param string $url URL.
	 * @param string $who Who asked.
	 * @return Invalidation|\WP_Error
	 */
	public function url( $url, $who ) {
		$url = esc_url_raw( (string) $url, array( 'http', 'https' ) );
		if ( '' === $url || Settings::site_host( $url ) !== Settings::site_host( home_url() ) ) {
			/* translators: %s: site host. */
			return new \WP_Error( 'varnish_edge_bad_url', sprintf( __( 'Only absolute URLs of this site (%s) can be purged.', 'varnish-edge' ), Settings::site_host( home_url() ) ) );
		}
		return ( new Invalidation() )->urls( array( $url ) )->reason( 'manual purge of a URL by ' . $who );
	}

	/**
	 * Surrogate keys (namespaced automatically when given without the namespace).
	 *
	 * @param string[] $keys Keys.
	 * @param string   $who  Who asked.
	 * @return Invalidation|\WP_Error
	 */
	public function keys( array $keys, $who ) {
		$ns  = $this->settings->key_namespace();
		$out = array();
		foreach ( $keys as $key ) {
			$key = trim( (string) $key );
			if ( '' === $key ) {
				continue;
			}
			if ( 0 !== strpos( $key, $ns . '-' ) ) {
				$key = $ns . '-' . $key;
			}
			if ( ! preg_match( '/^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/', $key ) ) {
				/* translators: %s: the rejected key. */
				return new \WP_Error( 'varnish_edge_bad_key', sprintf( __( 'Invalid surrogate key: %s', 'varnish-edge' ), $key ) );
			}
			$out[] = $key;
		}
		if ( ! $out ) {
			return new \WP_Error( 'varnish_edge_no_key', __( 'No surrogate key given.', 'varnish-edge' ) );
		}
		return ( new Invalidation() )->tags( $out )->reason( 'manual purge of keys by ' . $who );
	}

	/**
	 * A post's own pages and every listing that shows it.
	 *
	 * @param int    $post_id Post id.
	 * @param string $who     Who asked.
	 * @return Invalidation|\WP_Error
	 */
	public function post( $post_id, $who ) {
		$post = get_post( (int) $post_id );
		if ( ! $post ) {
			/* translators: %d: post id. */
			return new \WP_Error( 'varnish_edge_no_post', sprintf( __( 'There is no post with ID %d.', 'varnish-edge' ), (int) $post_id ) );
		}
		$state = $this->detector->snapshot( $post );
		$inv   = $this->detector->invalidation_for( $state, array_merge( $state, array( 'status' => 'draft' ) ) );
		return $inv->reason( 'manual purge of post ' . $post->ID . ' by ' . $who );
	}

	/**
	 * What edits of a post would invalidate: a content update, and unpublishing.
	 *
	 * @param int $post_id Post id.
	 * @return array<string,Invalidation>|\WP_Error
	 */
	public function explain( $post_id ) {
		$post = get_post( (int) $post_id );
		if ( ! $post ) {
			/* translators: %d: post id. */
			return new \WP_Error( 'varnish_edge_no_post', sprintf( __( 'There is no post with ID %d.', 'varnish-edge' ), (int) $post_id ) );
		}
		$state = $this->detector->snapshot( $post );
		return array(
			'update'    => $this->detector->invalidation_for( $state, array_merge( $state, array( 'content' => 'changed' ) ) ),
			'unpublish' => $this->detector->invalidation_for( $state, array_merge( $state, array( 'status' => 'draft' ) ) ),
			'publish'   => $this->detector->invalidation_for( array_merge( $state, array( 'status' => 'draft' ) ), array_merge( $state, array( 'status' => 'publish' ) ) ),
		);
	}
}
