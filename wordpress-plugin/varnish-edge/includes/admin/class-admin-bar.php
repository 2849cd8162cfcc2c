<?php
/**
 * Admin bar purge links.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * "Purge this page" and "Purge whole site" in the admin bar.
 */
class Admin_Bar {

	/**
	 * Hooks: the admin bar's nodes.
	 */
	public function register(): void {
		add_action( 'admin_bar_menu', array( $this, 'add_nodes' ), 100 );
	}

	/**
	 * Capability needed to purge.
	 */
	public static function capability(): string {
		return (string) apply_filters( 'varnish_edge_purge_capability', 'manage_options' );
	}

	/**
	 * Signed link to the purge handler.
	 *
	 * @param string $scope `all` or `url`.
	 * @param string $url   URL for `url`.
	 */
	public static function purge_link( string $scope, string $url = '' ): string {
		$args = array(
			'action' => 'varnish_edge_purge',
			'scope'  => $scope,
		);
		if ( '' !== $url ) {
			$args['url'] = rawurlencode( $url );
		}
		return wp_nonce_url( add_query_arg( $args, admin_url( 'admin-post.php' ) ), 'varnish_edge_purge_' . $scope );
	}

	/**
	 * Action `admin_bar_menu`.
	 */
	public function add_nodes( \WP_Admin_Bar $bar ): void {
		if ( ! current_user_can( self::capability() ) ) {
			return;
		}
		$bar->add_node(
			array(
				'id'    => 'varnish-edge',
				'title' => esc_html__( 'Varnish', 'varnish-edge' ),
				'href'  => esc_url( admin_url( 'options-general.php?page=varnish-edge' ) ),
			)
		);
		if ( ! is_admin() ) {
			$scheme = is_ssl() ? 'https' : 'http';
			$host   = isset( $_SERVER['HTTP_HOST'] ) ? sanitize_text_field( wp_unslash( $_SERVER['HTTP_HOST'] ) ) : '';
			$uri    = isset( $_SERVER['REQUEST_URI'] ) ? esc_url_raw( wp_unslash( $_SERVER['REQUEST_URI'] ) ) : '/';
			$bar->add_node(
				array(
					'parent' => 'varnish-edge',
					'id'     => 'varnish-edge-purge-page',
					'title'  => esc_html__( 'Purge this page', 'varnish-edge' ),
					'href'   => esc_url( self::purge_link( 'url', $scheme . '://' . $host . $uri ) ),
				)
			);
		}
		$bar->add_node(
			array(
				'parent' => 'varnish-edge',
				'id'     => 'varnish-edge-purge-all',
				'title'  => esc_html__( 'Purge whole site', 'varnish-edge' ),
				'href'   => esc_url( self::purge_link( 'all' ) ),
			)
		);
	}
}
