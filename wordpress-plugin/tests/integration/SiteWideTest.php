<?php
/**
 * Changes nobody can map to pages invalidate the whole site, with the reason in the event.
 */
class SiteWideTest extends VE_TestCase {

	protected function tearDown(): void {
		$GLOBALS['current_screen'] = null;
		unset( $_SERVER['REQUEST_METHOD'] );
		parent::tearDown();
	}

	private function reasons(): array {
		return array_column( Environment::accepted_events(), 'reason' );
	}

	public function test_plugin_activation_and_deactivation_ban_the_site(): void {
		$this->assertNull( activate_plugin( Fixtures::PLUGIN ) );
		$this->end_request();
		$this->assertTrue( $this->sent_all() );
		$this->assertStringContainsString( 'plugin ' . Fixtures::PLUGIN . ' activated', implode( ' ', $this->reasons() ) );

		Environment::clear_webhooks();
		deactivate_plugins( Fixtures::PLUGIN );
		$this->end_request();
		$this->assertTrue( $this->sent_all() );
		$this->assertStringContainsString( 'deactivated', implode( ' ', $this->reasons() ) );
	}

	public function test_plugin_theme_and_core_updates_ban_the_site(): void {
		// WordPress's own callbacks would call WordPress.org and show the About screen.
		remove_action( 'upgrader_process_complete', 'wp_version_check', 10 );
		remove_action( 'upgrader_process_complete', 'wp_update_plugins', 10 );
		remove_action( 'upgrader_process_complete', 'wp_update_themes', 10 );
		remove_action( 'upgrader_process_complete', array( 'Language_Pack_Upgrader', 'async_upgrade' ), 20 );
		remove_action( '_core_updated_successfully', '_redirect_to_about_wordpress', 10 );
		do_action( 'upgrader_process_complete', null, array( 'action' => 'update', 'type' => 'plugin', 'plugins' => array( 'akismet/akismet.php' ) ) );
		$this->end_request();
		$this->assertTrue( $this->sent_all() );
		$this->assertStringContainsString( 'plugin update akismet/akismet.php', implode( ' ', $this->reasons() ) );

		Environment::clear_webhooks();
		do_action( 'upgrader_process_complete', null, array( 'action' => 'install', 'type' => 'theme', 'theme' => 'twentytwentyfour' ) );
		$this->end_request();
		$this->assertStringContainsString( 'theme install twentytwentyfour', implode( ' ', $this->reasons() ) );

		Environment::clear_webhooks();
		do_action( '_core_updated_successfully', '6.1.10' );
		$this->end_request();
		$this->assertTrue( $this->sent_all() );
		$this->assertStringContainsString( 'WordPress updated to 6.1.10', implode( ' ', $this->reasons() ) );
	}

	public function test_unknown_autoloaded_option_changed_from_an_admin_screen_bans_the_site(): void {
		update_option( 'acme_banner_text', 'one', true );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks(), 'outside an admin screen: a plugin counter, not an editor decision' );

		set_current_screen( 'options-general' );
		$this->assertTrue( is_admin() );
		update_option( 'acme_banner_text', 'two' );
		$this->end_request();
		$this->assertSame( array(), Environment::webhooks(), 'an admin page view (GET) writing its bookkeeping' );

		$_SERVER['REQUEST_METHOD'] = 'POST'; // The settings form submitted.
		update_option( 'acme_banner_text', 'three' );
		$this->end_request();
		$this->assertTrue( $this->sent_all() );
		$this->assertStringContainsString( 'option acme_banner_text changed from an admin screen', implode( ' ', $this->reasons() ) );

		Environment::clear_webhooks();
		add_option( 'acme_new_setting', 'x', '', 'yes' );
		$this->end_request();
		$this->assertTrue( $this->sent_all(), 'a new autoloaded option' );
		delete_option( 'acme_banner_text' );
		delete_option( 'acme_new_setting' );
		$this->end_request();
	}

	public function test_not_autoloaded_and_bookkeeping_options_do_not_ban(): void {
		set_current_screen( 'options-general' );
		$_SERVER['REQUEST_METHOD'] = 'POST';
		add_option( 'acme_log', 'x', '', 'no' );
		update_option( 'acme_log', 'y' );
		set_transient( 'acme_cache', 'z' );
		update_option( 'recently_edited', array( 'x' ) );
		update_option( 'varnish_edge_probe', 1, true ); // The plugin's own options.
		$this->end_request();
		$this->assertFalse( $this->sent_all() );
		delete_option( 'acme_log' );
		delete_option( 'varnish_edge_probe' );
		delete_transient( 'acme_cache' );

		$ignore = static function ( array $options ): array {
			$options[] = 'acme_*';
			return $options;
		};
		add_filter( 'varnish_edge_ignored_options', $ignore );
		update_option( 'acme_counter', 1, true );
		update_option( 'acme_counter', 2, true );
		$this->end_request();
		remove_filter( 'varnish_edge_ignored_options', $ignore );
		$this->assertFalse( $this->sent_all(), 'the ignore list is filterable' );
		delete_option( 'acme_counter' );
		$this->end_request();
	}

	public function test_global_styles_save_drops_the_cached_stylesheet_and_bans(): void {
		$styles = WP_Theme_JSON_Resolver::get_user_data_from_wp_global_styles( wp_get_theme(), true );
		$this->end_request();
		Environment::clear_webhooks();
		// WordPress 6.1 serves the front end's global CSS from this transient for a minute: a page
		// refetched right after the purge would keep the old colours for the whole TTL.
		set_transient( 'global_styles_' . get_stylesheet(), 'body{background:stale}', MINUTE_IN_SECONDS );
		wp_update_post( array( 'ID' => $styles['ID'], 'post_content' => wp_json_encode( array( 'version' => 2, 'isGlobalStylesUserThemeJSON' => true, 'styles' => array( 'color' => array( 'background' => '#010203' ) ) ) ) ) );
		$this->end_request();
		$this->assertFalse( get_transient( 'global_styles_' . get_stylesheet() ) );
		$this->assertTrue( $this->sent_all() );
		wp_delete_post( $styles['ID'], true );
		$this->end_request();
	}
}
