<?php
/**
 * Invalidations for changes every page may show.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Menus, widgets, theme, customizer, global styles, plugins and core: the component keys every
 * page rendering them carries (`menus`, `widgets`), or the whole site.
 */
class Site_Changes extends Change_Handler {

	/**
	 * Menus (classic menus, menu items, locations): every page that renders a menu.
	 */
	public function menus_changed() {
		$this->queue( ( new Invalidation() )->tags( array( $this->scheme()->listing( 'menus' ) ), true )->reason( 'menus changed' ) );
	}

	/**
	 * Widgets: every page that renders a sidebar.
	 */
	public function widgets_changed() {
		$this->queue( ( new Invalidation() )->tags( array( $this->scheme()->listing( 'widgets' ) ), true )->reason( 'widgets changed' ) );
	}

	/**
	 * The whole site.
	 *
	 * @param string $reason Reason.
	 */
	public function site_changed( $reason ) {
		$this->queue( ( new Invalidation() )->everything()->reason( $reason ) );
	}

	/**
	 * Actions `save_post_wp_global_styles` / `delete_post` (of that type): WordPress 6.1 keeps the
	 * front end's global stylesheet in a transient for a minute, so the page Varnish fetches
	 * after the purge would still carry the old CSS, for the whole TTL. Drop that cache before
	 * the site-wide purge goes out.
	 *
	 * @param int $post_id Post id.
	 */
	public function on_global_styles_saved( $post_id = 0 ) {
		if ( 'delete_post' === current_action() && 'wp_global_styles' !== get_post_type( (int) $post_id ) ) {
			return;
		}
		foreach ( array( 'global_styles_', 'global_styles_svg_filters_' ) as $prefix ) {
			delete_transient( $prefix . get_stylesheet() );
		}
	}

	/**
	 * Action `switch_theme`.
	 *
	 * @param string $name Theme name.
	 */
	public function on_switch_theme( $name ) {
		$this->site_changed( 'theme switched to ' . sanitize_text_field( (string) $name ) );
	}

	/**
	 * Action `customize_save_after`.
	 */
	public function on_customize_save() {
		$this->site_changed( 'customizer saved' );
	}

	/**
	 * Actions `activated_plugin` / `deactivated_plugin`: a plugin may change any page.
	 *
	 * @param string $plugin       Plugin file.
	 * @param bool   $network_wide Network-wide.
	 */
	public function on_plugin_toggled( $plugin, $network_wide = false ) {
		$this->site_changed( sprintf( 'plugin %s %s', sanitize_text_field( (string) $plugin ), 'activated_plugin' === current_action() ? 'activated' : 'deactivated' ) );
	}

	/**
	 * Action `upgrader_process_complete`: plugins, themes, core or translations installed or
	 * updated.
	 *
	 * @param \WP_Upgrader|null $upgrader Upgrader.
	 * @param array             $extra    Details (`type`, `action`, `plugins`, `themes`).
	 */
	public function on_upgrade( $upgrader = null, $extra = array() ) {
		$extra = is_array( $extra ) ? $extra : array();
		$type  = sanitize_key( (string) ( $extra['type'] ?? 'unknown' ) );
		$names = array();
		foreach ( array( 'plugins', 'themes' ) as $list ) {
			foreach ( (array) ( $extra[ $list ] ?? array() ) as $name ) {
				$names[] = sanitize_text_field( (string) $name );
			}
		}
		foreach ( array( 'plugin', 'theme' ) as $one ) {
			if ( isset( $extra[ $one ] ) && is_string( $extra[ $one ] ) ) {
				$names[] = sanitize_text_field( $extra[ $one ] );
			}
		}
		$this->site_changed( trim( sprintf( '%s %s %s', $type, sanitize_key( (string) ( $extra['action'] ?? 'update' ) ), implode( ', ', array_slice( $names, 0, 10 ) ) ) ) );
	}

	/**
	 * Action `_core_updated_successfully`.
	 *
	 * @param string $version New version.
	 */
	public function on_core_updated( $version = '' ) {
		$this->site_changed( 'WordPress updated to ' . sanitize_text_field( (string) $version ) );
	}
}
