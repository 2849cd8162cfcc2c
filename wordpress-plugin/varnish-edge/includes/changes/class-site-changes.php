<?php
/**
 * Invalidations for changes every page may show.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Menus, widgets, the site's identity, theme, customizer, global styles, plugins and core: the
 * component keys every page rendering them carries (`menus`, `widgets`, `site-name`...), or the
 * whole site.
 */
class Site_Changes extends Change_Handler {

	/**
	 * Hook into WordPress.
	 */
	public function register(): void {
		foreach ( array( 'wp_update_nav_menu', 'wp_delete_nav_menu', 'wp_update_nav_menu_item', 'wp_add_nav_menu_item' ) as $hook ) {
			add_action( $hook, array( $this, 'menus_changed' ), 10, 0 );
		}
		add_action( 'switch_theme', array( $this, 'on_switch_theme' ), 10, 1 );
		add_action( 'save_post_wp_global_styles', array( $this, 'on_global_styles_saved' ), 10, 1 );
		add_action( 'delete_post', array( $this, 'on_global_styles_saved' ), 10, 1 );
		add_action( 'customize_save_after', array( $this, 'on_customize_save' ), 10, 0 );
		add_action( 'activated_plugin', array( $this, 'on_plugin_toggled' ), 10, 2 );
		add_action( 'deactivated_plugin', array( $this, 'on_plugin_toggled' ), 10, 2 );
		add_action( 'upgrader_process_complete', array( $this, 'on_upgrade' ), 10, 2 );
		add_action( '_core_updated_successfully', array( $this, 'on_core_updated' ), 10, 1 );
	}

	/**
	 * Menus (classic menus, menu items, locations): every page that renders a menu; the most
	 * visited ones are re-fetched at once.
	 */
	public function menus_changed(): void {
		$this->queue( ( new Invalidation() )->tags( array( $this->scheme()->listing( 'menus' ) ), true )->refresh_site()->reason( 'menus changed' ) );
	}

	/**
	 * Widgets: every page that renders a sidebar.
	 */
	public function widgets_changed(): void {
		$this->queue( ( new Invalidation() )->tags( array( $this->scheme()->listing( 'widgets' ) ), true )->refresh_site()->reason( 'widgets changed' ) );
	}

	/**
	 * The site's name, tagline, icon or logo: every response that shows it; the most visited
	 * pages are re-fetched at once.
	 *
	 * @param string $part   `name`, `tagline`, `icon` or `logo`.
	 * @param string $reason Reason.
	 */
	public function identity_changed( string $part, string $reason ): void {
		$this->queue( ( new Invalidation() )->tags( array( $this->scheme()->identity( $part ) ), true )->refresh_site()->reason( $reason ) );
	}

	/**
	 * The whole site.
	 */
	public function site_changed( string $reason ): void {
		$this->queue( ( new Invalidation() )->everything()->reason( $reason ) );
	}

	/**
	 * Actions `save_post_wp_global_styles` / `delete_post` (of that type): WordPress 6.1 keeps the
	 * front end's global stylesheet in a transient for a minute, so the page Varnish fetches
	 * after the purge would still carry the old CSS, for the whole TTL. Drop that cache before
	 * the site-wide purge goes out.
	 */
	public function on_global_styles_saved( int $post_id = 0 ): void {
		if ( 'delete_post' === current_action() && 'wp_global_styles' !== get_post_type( $post_id ) ) {
			return;
		}
		foreach ( array( 'global_styles_', 'global_styles_svg_filters_' ) as $prefix ) {
			delete_transient( $prefix . get_stylesheet() );
		}
	}

	/**
	 * Action `switch_theme`.
	 */
	public function on_switch_theme( string $name ): void {
		$this->site_changed( 'theme switched to ' . sanitize_text_field( $name ) );
	}

	/**
	 * Action `customize_save_after`.
	 */
	public function on_customize_save(): void {
		$this->site_changed( 'customizer saved' );
	}

	/**
	 * Actions `activated_plugin` / `deactivated_plugin`: a plugin may change any page.
	 */
	public function on_plugin_toggled( string $plugin, bool $network_wide = false ): void {
		$this->site_changed( sprintf( 'plugin %s %s', sanitize_text_field( $plugin ), 'activated_plugin' === current_action() ? 'activated' : 'deactivated' ) );
	}

	/**
	 * Action `upgrader_process_complete`: plugins, themes, core or translations installed or
	 * updated.
	 *
	 * @param mixed $upgrader The upgrader (unused: everything is in `$extra`).
	 * @param mixed $extra    Details (`type`, `action`, `plugins`, `themes`); an array unless
	 *                        another plugin calls the action otherwise.
	 */
	public function on_upgrade( mixed $upgrader = null, mixed $extra = array() ): void {
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
	 */
	public function on_core_updated( string $version = '' ): void {
		$this->site_changed( 'WordPress updated to ' . sanitize_text_field( $version ) );
	}
}
