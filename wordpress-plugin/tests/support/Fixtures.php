<?php
/**
 * Fixture code installed into the test site next to the plugin: a mu-plugin using the public API
 * and printing a custom field, and a plugin to activate.
 */
final class Fixtures {

	const PLUGIN = 've-fixture-plugin/ve-fixture-plugin.php';

	/** Link the fixtures into wp-content (before WordPress is loaded, so both the server and the test process run them). */
	public static function install( $wp_dir ) {
		$content = $wp_dir . '/wp-content';
		if ( ! is_dir( $content . '/mu-plugins' ) ) {
			mkdir( $content . '/mu-plugins', 0777, true );
		}
		symlink( __DIR__ . '/fixture/ve-fixture.php', $content . '/mu-plugins/ve-fixture.php' );
		symlink( __DIR__ . '/fixture/ve-fixture-plugin', $content . '/plugins/ve-fixture-plugin' );
	}
}
