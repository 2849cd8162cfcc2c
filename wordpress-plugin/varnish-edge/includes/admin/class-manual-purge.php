<?php
/**
 * Purges requested by people (admin bar, settings page, WP-CLI).
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Builds invalidations for explicit purge requests and explains what an edit would purge, with
 * the same key scheme and post rules as the automatic ones.
 */
class Manual_Purge {

	/** @var Settings */
	private $settings;

	/**
	 * Constructor.
	 */
	public function __construct( Settings $settings ) {
		$this->settings = $settings;
	}

	/**
	 * The post with this id, or the error a person sees.
	 */
	private function find_post( int $post_id ): \WP_Post|\WP_Error {
		$post = get_post( $post_id );
		/* translators: %d: post id. */
		return $post ? $post : new \WP_Error( 'varnish_edge_no_post', sprintf( __( 'There is no post with ID %d.', 'varnish-edge' ), $post_id ) );
	}

	/**
	 * The post rules of the current site.
	 */
	private function policy(): Post_Change_Policy {
		return new Post_Change_Policy( new Key_Scheme( $this->settings->key_namespace() ), new Live_Post_Facts() );
	}

	/**
	 * The whole site.
	 *
	 * @param string $who Who asked.
	 */
	public function all( string $who ): Invalidation {
		return ( new Invalidation() )->everything()->reason( 'manual purge of the whole site by ' . $who );
	}

	/**
	 * One URL of this site.
	 *
	 * @param string $url URL.
	 * @param string $who Who asked.
	 */
	public function url( string $url, string $who ): Invalidation|\WP_Error {
		$url = esc_url_raw( $url, array( 'http', 'https' ) );
		if ( '' === $url || Settings::site_host( $url ) !== Settings::site_host( home_url() ) ) {
			/* translators: %s: site host. */
			return new \WP_Error( 'varnish_edge_bad_url', sprintf( __( 'Only absolute URLs of this site (%s) can be purged.', 'varnish-edge' ), Settings::site_host( home_url() ) ) );
		}
		// The protocol's grammar (Url_Grammar): say why here rather than purge the whole site.
		list( $normalized, $why ) = Url_Grammar::check( $url, Settings::site_host( home_url() ) );
		if ( '' === $normalized ) {
			/* translators: 1: the URL, 2: why it cannot be purged. */
			return new \WP_Error( 'varnish_edge_bad_url', sprintf( __( 'The URL %1$s cannot be purged: %2$s. Write it as the browser shows it, without a user name or an empty or zero-padded port.', 'varnish-edge' ), Url_Grammar::redact( $url ), $why ) );
		}
		$url = $normalized;
		return ( new Invalidation() )->urls( array( $url ) )->refresh( array( $url ) )->reason( 'manual purge of a URL by ' . $who );
	}

	/**
	 * Surrogate keys (namespaced automatically when given without the namespace).
	 *
	 * @param array<int,mixed> $keys Keys as typed.
	 * @param string           $who  Who asked.
	 */
	public function keys( array $keys, string $who ): Invalidation|\WP_Error {
		$scheme = new Key_Scheme( $this->settings->key_namespace() );
		$out    = array();
		foreach ( $keys as $name ) {
			if ( '' === trim( (string) $name ) ) {
				continue;
			}
			$key = $scheme->custom( (string) $name );
			if ( ! Key_Scheme::is_valid_key( $key ) ) {
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
	 */
	public function post( int $post_id, string $who ): Invalidation|\WP_Error {
		$post = $this->find_post( $post_id );
		if ( is_wp_error( $post ) ) {
			return $post;
		}
		$state = Post_Snapshot::of( $post );
		// Its own page first: the post stays public, only its cached copies go.
		$inv = ( new Invalidation() )->refresh( 'publish' === $post->post_status ? array( $state['url'] ) : array() );
		$inv->merge( $this->policy()->invalidation( $state, array_merge( $state, array( 'status' => 'draft' ) ) ) );
		return $inv->reason( 'manual purge of post ' . $post->ID . ' by ' . $who );
	}

	/**
	 * What edits of a post would invalidate: a content update, and unpublishing.
	 *
	 * @return array<string,Invalidation>|\WP_Error
	 */
	public function explain( int $post_id ): array|\WP_Error {
		$post = $this->find_post( $post_id );
		if ( is_wp_error( $post ) ) {
			return $post;
		}
		$state  = Post_Snapshot::of( $post );
		$policy = $this->policy();
		return array(
			'update'    => $policy->invalidation( $state, array_merge( $state, array( 'content' => 'changed' ) ) ),
			'unpublish' => $policy->invalidation( $state, array_merge( $state, array( 'status' => 'draft' ) ) ),
			'publish'   => $policy->invalidation( array_merge( $state, array( 'status' => 'draft' ) ), array_merge( $state, array( 'status' => 'publish' ) ) ),
		);
	}
}
